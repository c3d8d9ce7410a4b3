/**
 * `rouse serve`: run the coordinator (HTTP API on SQLite, or on PostgreSQL shared with other
 * coordinators) until SIGINT/SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { pino } from 'pino';
import { ValidationError } from '../../core/errors.js';
import { startRouseServer } from '../../server.js';
import {
  describeStore,
  explainStoreOpenFailure,
  INVALID_POSTGRES_URL,
  isPassingStoreOpenFailure,
  type StoreConfig,
} from '../../server-store.js';
import { action } from '../action.js';
import { resolveDataDir } from '../connection.js';
import { type CliContext, CliError, EXIT } from '../context.js';
import { prettyDestination } from '../format/log-line.js';
import { createStyle } from '../format/style.js';
import { renderPairs } from '../format/table.js';
import { formatDuration } from '../format/time.js';
import {
  parseDuration,
  parseInteger,
  parsePort,
  parsePositiveDuration,
  parsePositiveInteger,
} from '../parse.js';

interface ServeOptions extends StoreCliOptions {
  port: number;
  host: string;
  dataDir?: string;
  db?: string;
  logLevel: string;
  metricsPublic?: boolean;
  showTokens?: boolean;
  shardLeaseTtl?: number;
  storeWait?: number;
  sweepInterval?: number;
  coordinatorId?: string;
  clockOffsetMs?: number;
}

/** How long `serve` waits for an unreachable PostgreSQL store at start-up unless --store-wait says. */
const DEFAULT_STORE_WAIT_MS = 30_000;

/** The environment variable each token is read from. */
const TOKEN_ENV_BY_NAME = {
  admin: 'ROUSE_ADMIN_TOKEN',
  agent: 'ROUSE_AGENT_TOKEN',
  readonly: 'ROUSE_READONLY_TOKEN',
} as const;

/** The same, by the name of the option a validation error names. */
const TOKEN_ENV: Record<string, string> = Object.fromEntries(
  Object.entries(TOKEN_ENV_BY_NAME).map(([name, variable]) => [`${name}Token`, variable]),
);

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** The options that choose and reach the store (shared with `rouse migrate`). */
export interface StoreCliOptions {
  store?: string;
  pgSchema?: string;
  poolSize?: number;
  statementTimeout?: number;
  connectTimeout?: number;
  pgSsl?: boolean;
  pgSslCa?: string;
  pgSslInsecure?: boolean;
  migrate?: boolean;
}

/** Add --store and the PostgreSQL connection flags to `cmd`. */
export function addStoreOptions(cmd: Command): Command {
  return cmd
    .option(
      '--store <url>',
      'store: postgres://user:pass@host:5432/db (several coordinators share it), sqlite or sqlite:<path> (env ROUSE_STORE; default: SQLite)',
    )
    .option(
      '--pg-schema <name>',
      'PostgreSQL schema holding the tables (env ROUSE_PG_SCHEMA; default: public)',
    )
    .option('--pool-size <n>', 'PostgreSQL connections per coordinator (default: 10)', parsePositiveInteger)
    .option(
      '--statement-timeout <duration>',
      'longest a PostgreSQL statement may run; calls answer 503 past it (default: 5s)',
      parsePositiveDuration,
    )
    .option(
      '--connect-timeout <duration>',
      'longest opening a PostgreSQL connection may take (default: 5s)',
      parsePositiveDuration,
    )
    .option('--pg-ssl', 'connect to PostgreSQL over TLS, verifying its certificate')
    .option('--pg-ssl-ca <file>', 'trust this CA certificate (PEM) for PostgreSQL TLS (implies --pg-ssl)')
    .option('--pg-ssl-insecure', 'TLS without verifying the certificate (testing only)');
}

export function registerServe(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('serve')
    .description(
      'run the coordinator (HTTP API; SQLite, or PostgreSQL shared by several coordinators) until Ctrl-C',
    )
    .option('-p, --port <port>', 'port to listen on (0 = any free port)', parsePort, 7070)
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option(
      '--data-dir <dir>',
      'data directory: SQLite database, result blobs (SQLite only), token files, server.json (default: ./.rouse)',
    )
    .option('--db <path>', 'SQLite database file, or :memory: (default: <data-dir>/rouse.db)');
  addStoreOptions(cmd)
    .option(
      '--no-migrate',
      'do not apply pending migrations on start (run `rouse migrate`); refuse an older schema',
    )
    .option(
      '--store-wait <duration>',
      `how long start-up waits for a PostgreSQL store that refuses or does not answer yet (e.g. started alongside), trying every second; a wrong password or missing database fails at once (default: ${formatDuration(DEFAULT_STORE_WAIT_MS)}; 0 = no wait)`,
      parseDuration,
    )
    .option(
      '--shard-lease-ttl <duration>',
      "lease on this coordinator's lease shards: a dead coordinator's shards move within this (default: 5s)",
      parsePositiveDuration,
    )
    .option(
      '--coordinator-id <id>',
      "this coordinator's name in the shard leases, unique among live ones: a start under the id of a live coordinator is refused; under a dead one's, it waits for its presence to lapse (default: random per start)",
    )
    .addOption(
      new Option('--sweep-interval <duration>', 'overdue-lease sweep period')
        .argParser(parsePositiveDuration)
        .hideHelp(),
    )
    .addOption(
      new Option('--clock-offset-ms <ms>', "shift this coordinator's clock (tests)")
        .argParser(parseInteger)
        .hideHelp(),
    )
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

Several coordinators: start each with the same --store postgres://… and the same tokens (set
ROUSE_ADMIN_TOKEN, ROUSE_AGENT_TOKEN and ROUSE_READONLY_TOKEN on every host), behind any load
balancer. Migrations run on start unless --no-migrate (then run \`rouse migrate --store …\` first).

Examples:
  $ rouse serve
  $ rouse serve --port 0 --data-dir /tmp/rouse --db :memory:
  $ ROUSE_ADMIN_TOKEN=$(openssl rand -hex 24) rouse serve --host 0.0.0.0 --port 8080
  $ rouse serve --store postgres://rouse:secret@db:5432/rouse --pool-size 20 --pg-ssl-ca ca.pem`,
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
  const store = storeConfig(ctx, opts);
  if (opts.storeWait !== undefined && store?.kind !== 'postgres')
    throw new CliError('--store-wait needs a PostgreSQL store: pass --store postgres://…', EXIT.usage);
  const storeWaitMs = store?.kind === 'postgres' ? (opts.storeWait ?? DEFAULT_STORE_WAIT_MS) : 0;
  const clockOffsetMs =
    opts.clockOffsetMs ?? (env.ROUSE_CLOCK_OFFSET_MS ? parseInteger(env.ROUSE_CLOCK_OFFSET_MS) : 0);

  let server: Awaited<ReturnType<typeof startRouseServer>>;
  try {
    server = await startRouseServer({
      port: opts.port,
      host: opts.host,
      dataDir,
      ...(db === undefined ? {} : { db }),
      ...(store === undefined ? {} : { store, storeWaitMs }),
      ...(clockOffsetMs === 0 ? {} : { clockOffsetMs }),
      ...(opts.shardLeaseTtl === undefined ? {} : { shardLeaseTtlMs: opts.shardLeaseTtl }),
      ...(opts.sweepInterval === undefined ? {} : { sweepIntervalMs: opts.sweepInterval }),
      ...(opts.coordinatorId === undefined ? {} : { coordinatorId: opts.coordinatorId }),
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
    const storeFailure = explainStoreOpenFailure(err, store);
    if (storeFailure) {
      const waited = storeWaitMs > 0 && isPassingStoreOpenFailure(err);
      throw new CliError(
        waited
          ? `${storeFailure} (gave up after ${formatDuration(storeWaitMs)}: --store-wait)`
          : storeFailure,
      );
    }
    // A token from the environment that is too weak: name the variable, not the option.
    const issue =
      err instanceof ValidationError
        ? (err.details.issues as { path: string; message: string }[] | undefined)?.[0]
        : undefined;
    const envName = issue ? TOKEN_ENV[issue.path] : undefined;
    if (issue && envName && env[envName]) throw new CliError(`${envName} ${issue.message}`, EXIT.usage);
    throw err;
  }

  const tokenLine = (name: keyof typeof TOKEN_ENV_BY_NAME, value: string): string => {
    const envName = TOKEN_ENV_BY_NAME[name];
    const file = server.tokenFiles?.[name] ?? null;
    const where = file ?? (env[envName] ? `from ${envName}` : 'given by option');
    return opts.showTokens ? `${where}  ${style.yellow(value)}` : where;
  };
  const banner = [
    `${style.bold('Rouse')} ${ctx.version} coordinator listening on ${style.bold(server.url)}`,
    ...renderPairs(
      [
        ['data dir', server.dataDir],
        ['store', describeStore(server.storeConfig)],
        ['admin token', tokenLine('admin', server.adminToken)],
        [
          'agent token',
          `${tokenLine('agent', server.agentToken)}  ${style.dim('(enrollment: agents register with it)')}`,
        ],
        ['read-only', tokenLine('readonly', server.readonlyToken)],
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
  // Behind a load balancer every coordinator must accept the same tokens: one made on this host is
  // known only here.
  const ownTokens = (Object.keys(TOKEN_ENV_BY_NAME) as (keyof typeof TOKEN_ENV_BY_NAME)[]).filter(
    (name) => server.tokenFiles[name] !== null,
  );
  if (server.storeConfig.kind === 'postgres' && ownTokens.length > 0) {
    const vars = ownTokens.map((name) => TOKEN_ENV_BY_NAME[name]).join(', ');
    say(
      style.yellow(
        `warning: the ${ownTokens.join(', ')} token(s) come from this host's data directory; other coordinators on this store will not accept them. Set ${vars} to the same values on every coordinator.`,
      ),
    );
  }

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

/** The store from --store / ROUSE_STORE and the PostgreSQL flags; undefined: SQLite (--db). */
export function storeConfig(ctx: CliContext, opts: StoreCliOptions): StoreConfig | undefined {
  const url = opts.store ?? ctx.env.ROUSE_STORE;
  const pgFlags = [
    ['--pg-schema', opts.pgSchema],
    ['--pool-size', opts.poolSize],
    ['--statement-timeout', opts.statementTimeout],
    ['--connect-timeout', opts.connectTimeout],
    ['--pg-ssl', opts.pgSsl],
    ['--pg-ssl-ca', opts.pgSslCa],
    ['--pg-ssl-insecure', opts.pgSslInsecure],
  ] as const;
  if (url === undefined || url === '' || !/^postgres(ql)?:\/\//.test(url)) {
    const given = pgFlags.find(([, v]) => v !== undefined);
    if (given)
      throw new CliError(`${given[0]} needs a PostgreSQL store: pass --store postgres://…`, EXIT.usage);
    if (url === undefined || url === '' || url === 'sqlite') return undefined;
    if (url.startsWith('sqlite:')) return { kind: 'sqlite', path: resolve(ctx.deps.cwd, url.slice(7)) };
    throw new CliError(
      `--store must be a postgres:// URL, sqlite or sqlite:<path> (got "${url}")`,
      EXIT.usage,
    );
  }
  if (!URL.canParse(url)) throw new CliError(INVALID_POSTGRES_URL, EXIT.usage);
  let ssl: boolean | { ca?: string; rejectUnauthorized?: boolean } | undefined;
  if (opts.pgSslCa !== undefined) {
    let ca: string;
    try {
      ca = readFileSync(resolve(ctx.deps.cwd, opts.pgSslCa), 'utf8');
    } catch (err) {
      throw new CliError(`--pg-ssl-ca: cannot read ${opts.pgSslCa}: ${(err as Error).message}`, EXIT.usage);
    }
    ssl = { ca, ...(opts.pgSslInsecure ? { rejectUnauthorized: false } : {}) };
  } else if (opts.pgSslInsecure) ssl = { rejectUnauthorized: false };
  else if (opts.pgSsl) ssl = true;
  const schema = opts.pgSchema ?? ctx.env.ROUSE_PG_SCHEMA;
  return {
    kind: 'postgres',
    connectionString: url,
    ...(schema ? { schema } : {}),
    ...(opts.poolSize === undefined ? {} : { poolSize: opts.poolSize }),
    ...(opts.statementTimeout === undefined ? {} : { statementTimeoutMs: opts.statementTimeout }),
    ...(opts.connectTimeout === undefined ? {} : { connectTimeoutMs: opts.connectTimeout }),
    ...(ssl === undefined ? {} : { ssl }),
    ...(opts.migrate === undefined ? {} : { migrate: opts.migrate }),
  };
}
