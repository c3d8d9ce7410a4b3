/** `rouse serve`: run the coordinator (HTTP API on SQLite) until SIGINT/SIGTERM. */
import { join, resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { pino } from 'pino';
import { startRouseServer } from '../../server.js';
import { action } from '../action.js';
import { resolveDataDir } from '../connection.js';
import { type CliContext, CliError, EXIT } from '../context.js';
import { prettyDestination } from '../format/log-line.js';
import { createStyle } from '../format/style.js';
import { renderPairs } from '../format/table.js';
import { parsePort } from '../parse.js';

interface ServeOptions {
  port: number;
  host: string;
  dataDir?: string;
  db?: string;
  logLevel: string;
  metricsPublic?: boolean;
  showTokens?: boolean;
}

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

export function registerServe(program: Command, ctx: CliContext): void {
  program
    .command('serve')
    .description('run the coordinator (HTTP API, SQLite store) until Ctrl-C')
    .option('-p, --port <port>', 'port to listen on (0 = any free port)', parsePort, 7070)
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option(
      '--data-dir <dir>',
      'data directory: database, blobs, token files, server.json (default: ./.rouse)',
    )
    .option('--db <path>', 'SQLite database file, or :memory: (default: <data-dir>/rouse.db)')
    .addOption(new Option('--log-level <level>', 'log level').choices(LOG_LEVELS).default('info'))
    .option('--metrics-public', 'serve GET /metrics without a token')
    .option('--show-tokens', 'print the token values in the banner (they are secrets)')
    .addHelpText(
      'after',
      `
Tokens: the admin token is read from ROUSE_ADMIN_TOKEN and the agent enrollment token from
ROUSE_AGENT_TOKEN (and ROUSE_READONLY_TOKEN); missing ones are generated on first start into the
data directory (mode 0600). The banner prints where they are, never their values unless --show-tokens.

Logs are JSON lines (pino) on stdout, or one readable line per record when stdout is a terminal.
The actual URL (useful with --port 0) is in <data-dir>/server.json while the server runs.

Examples:
  $ rouse serve
  $ rouse serve --port 0 --data-dir /tmp/rouse --db :memory:
  $ ROUSE_ADMIN_TOKEN=secret rouse serve --host 0.0.0.0 --port 8080`,
    )
    .action(action(ctx, (opts: ServeOptions) => serve(ctx, opts)));
}

async function serve(ctx: CliContext, opts: ServeOptions): Promise<number> {
  const { io, env } = ctx;
  const style = createStyle(io.color);
  const dataDir = resolveDataDir(ctx, opts.dataDir);
  const destination = io.isTTY
    ? prettyDestination((s) => io.out(s), style)
    : { write: (s: string) => io.out(s) };
  const logger = pino({ level: opts.logLevel, base: { pid: process.pid } }, destination);
  const db = opts.db === undefined || opts.db === ':memory:' ? opts.db : resolve(ctx.deps.cwd, opts.db);

  let server: Awaited<ReturnType<typeof startRouseServer>>;
  try {
    server = await startRouseServer({
      port: opts.port,
      host: opts.host,
      dataDir,
      ...(db === undefined ? {} : { db }),
      ...(env.ROUSE_ADMIN_TOKEN ? { adminToken: env.ROUSE_ADMIN_TOKEN } : {}),
      ...(env.ROUSE_AGENT_TOKEN ? { agentToken: env.ROUSE_AGENT_TOKEN } : {}),
      ...(env.ROUSE_READONLY_TOKEN ? { readonlyToken: env.ROUSE_READONLY_TOKEN } : {}),
      logLevel: opts.logLevel,
      logger,
      metricsPublic: Boolean(opts.metricsPublic),
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      throw new CliError(
        `${opts.host}:${opts.port} is already in use. Is another \`rouse serve\` running? Pick another --port (0 = any free port).`,
      );
    }
    if (code === 'EACCES')
      throw new CliError(`not allowed to listen on ${opts.host}:${opts.port}: ${String(err)}`);
    throw err;
  }

  const tokenLine = (name: 'admin' | 'agent' | 'readonly', envName: string, value: string): string => {
    const file = server.tokenFiles?.[name] ?? null;
    const where = file ?? (env[envName] ? `from ${envName}` : 'given by option');
    return opts.showTokens ? `${where}  ${style.yellow(value)}` : where;
  };
  const banner = [
    `${style.bold('Rouse')} ${ctx.version} coordinator listening on ${style.bold(server.url)}`,
    ...renderPairs(
      [
        ['data dir', server.dataDir],
        [
          'database',
          db === ':memory:'
            ? ':memory: (nothing survives a restart)'
            : (db ?? join(server.dataDir, 'rouse.db')),
        ],
        ['admin token', tokenLine('admin', 'ROUSE_ADMIN_TOKEN', server.adminToken)],
        [
          'agent token',
          `${tokenLine('agent', 'ROUSE_AGENT_TOKEN', server.agentToken)}  ${style.dim('(enrollment: agents register with it)')}`,
        ],
        ['read-only', tokenLine('readonly', 'ROUSE_READONLY_TOKEN', server.readonlyToken)],
        [
          'try',
          `rouse submit hello '{"n":1}' && rouse tasks${opts.dataDir ? ` --data-dir ${opts.dataDir}` : ''}`,
        ],
      ],
      '  ',
    ),
    style.dim('Press Ctrl-C to stop.'),
  ];
  // keep stdout pure JSON lines when it is not a terminal: the banner goes to stderr then
  const say = io.isTTY ? (s: string) => io.out(`${s}\n`) : (s: string) => io.err(`${s}\n`);
  for (const line of banner) say(line);

  const { done, dispose } = ctx.untilInterrupted();
  const signal = await done;
  dispose();
  logger.info({ signal }, 'shutting down');
  const again = ctx.untilInterrupted();
  void again.done.then((sig) => {
    if (sig !== 'abort') {
      ctx.warn(`received ${sig} again: exiting without a clean shutdown`);
      process.exit(EXIT.error);
    }
  });
  try {
    await server.close();
  } finally {
    again.dispose();
  }
  logger.info('stopped');
  return EXIT.ok;
}
