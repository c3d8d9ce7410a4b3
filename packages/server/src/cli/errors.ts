/**
 * Turning whatever a command threw into one line on stderr and an exit code:
 * API errors → `error: <message> (<code>)`, exit 1; unreachable coordinator → exit 3; usage → exit 2.
 */
import { RouseApiError, RouseNetworkError } from '@rouse/sdk';
import { CommanderError } from 'commander';
import { processAlive } from './connection.js';
import { type CliContext, CliError, EXIT, type ExitCode } from './context.js';

const HELP_CODES = new Set([
  'commander.helpDisplayed',
  'commander.help',
  'commander.version',
  'commander.executeSubCommandAsync',
]);

export function reportError(ctx: CliContext, err: unknown): ExitCode {
  const hint = ctx.reachHint;
  if (err instanceof CommanderError) {
    // commander has already printed its message (through configureOutput)
    return HELP_CODES.has(err.code) ? EXIT.ok : EXIT.usage;
  }
  if (err instanceof CliError) {
    ctx.warn(`error: ${err.message}`);
    return err.exitCode;
  }
  if (err instanceof RouseApiError) {
    ctx.warn(`error: ${err.message} (${err.code})`);
    const details = err.details;
    if (err.code === 'validation_failed' && details && Object.keys(details).length > 0) {
      ctx.warn(`  details: ${JSON.stringify(details)}`);
    }
    if (err.code === 'unauthorized') {
      ctx.warn('  check --token / ROUSE_TOKEN (the admin token is in <data-dir>/admin.token)');
    }
    return EXIT.error;
  }
  if (err instanceof RouseNetworkError) {
    const where = hint ? ` at ${hint.url}` : '';
    ctx.warn(`error: cannot reach the coordinator${where}: ${err.message}`);
    if (hint) {
      if (hint.serverPid !== null && !processAlive(hint.serverPid)) {
        ctx.warn(
          `  ${hint.urlSource} is stale: the server that wrote it (pid ${hint.serverPid}) is not running. Start it with \`rouse serve\`.`,
        );
      } else if (hint.urlSource.endsWith('server.json')) {
        ctx.warn(`  (URL from ${hint.urlSource}) Is \`rouse serve\` running? Or pass --url.`);
      } else {
        ctx.warn(`  (URL from ${hint.urlSource}) Is the coordinator running and is the URL right?`);
      }
    }
    return EXIT.unreachable;
  }
  const message = err instanceof Error ? err.message : String(err);
  ctx.warn(`error: ${message}`);
  return EXIT.error;
}
