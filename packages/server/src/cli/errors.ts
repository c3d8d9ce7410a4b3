/**
 * Turning whatever a command threw into one line on stderr and an exit code:
 * API errors → `error: <message> (<code>)`, exit 1; unreachable coordinator → exit 3; usage → exit 2.
 */
import { CommanderError } from 'commander';
import { type CliContext, CliError, EXIT, type ExitCode } from './context.js';

const HELP_CODES = new Set([
  'commander.helpDisplayed',
  'commander.help',
  'commander.version',
  'commander.executeSubCommandAsync',
]);

export async function reportError(ctx: CliContext, err: unknown): Promise<ExitCode> {
  const hint = ctx.reachHint;
  if (err instanceof CommanderError) {
    // commander has already printed its message (through configureOutput)
    return HELP_CODES.has(err.code) ? EXIT.ok : EXIT.usage;
  }
  if (err instanceof CliError) {
    ctx.warn(`error: ${err.message}`);
    return err.exitCode;
  }
  // The HTTP client's errors: only a command that used the client can throw them, and it has loaded
  // the SDK already; `rouse --help` and usage errors do not load it.
  const { RouseApiError, RouseNetworkError } = await import('@rouse/sdk');
  if (err instanceof RouseApiError) {
    ctx.warn(`error: ${err.message} (${err.code})`);
    const details = err.details;
    if (err.code === 'validation_failed' && details && Object.keys(details).length > 0) {
      ctx.warn(`  details: ${JSON.stringify(details)}`);
    }
    if (err.code === 'unauthorized') {
      ctx.warn(
        `  ${ctx.tokenHint ?? 'check --token / ROUSE_TOKEN (the admin token is in <data-dir>/admin.token)'}`,
      );
    }
    // What a command sends comes from its arguments and flags: a value the coordinator finds invalid
    // (a limit past its maximum, a negative sequence number) is a bad option value.
    return err.code === 'validation_failed' ? EXIT.usage : EXIT.error;
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

/** Is a process with this pid alive? (to say "server.json is stale" when it is not) */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
