/**
 * `rouse serve`: run the coordinator (HTTP API on SQLite, or on PostgreSQL shared with other
 * coordinators) until SIGINT/SIGTERM.
 */
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { RouseError, ValidationError } from '../../core/errors.js';
import { startRouseServer } from '../../server.js';
import { describeStore, explainStoreOpenFailure, isPassingStoreOpenFailure } from '../../server-store.js';
import { type CliContext, CliError, EXIT } from '../context.js';
import { resolveDataDir } from '../data-dir.js';
import { prettyDestination } from '../format/log-line.js';
import { createStyle } from '../format/style.js';
import { renderPairs } from '../format/table.js';
import { formatDuration } from '../format/time.js';
import type { LeanHeapPlan } from '../heap-tuning.js';
import { rouseCommand, shellQuote } from '../invocation.js';
import { watchParent } from '../parent-watch.js';
import { parseInteger } from '../parse.js';
import { storeConfig } from '../store-config.js';
import { DEFAULT_STORE_WAIT_MS, type StoreCliOptions } from '../store-options.js';

/** Ports the Fetch standard blocks ("bad ports"): browsers and Node's fetch refuse them. */
const FETCH_BLOCKED_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104,
  109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515,
  526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049,
  3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

export interface ServeOptions extends StoreCliOptions {
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
  policies?: string;
}

/** Where the watchdog's policies come from, for the banner. */
function policiesLine(
  server: Awaited<ReturnType<typeof startRouseServer>>,
  style: ReturnType<typeof createStyle>,
): string {
  const { source, policies } = server.policies.response();
  if (source === null) {
    return `built-in defaults ${style.dim(`(a ${join(server.dataDir, 'policies.yaml')} is picked up when it appears)`)}`;
  }
  return `${source} ${style.dim(`(${policies.map((p) => p.name).join(', ')}; reloaded on change)`)}`;
}

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

/** `heap`: what the command set of V8's heap before loading this module (heap-tuning.ts). */
export async function serve(ctx: CliContext, opts: ServeOptions, heap?: LeanHeapPlan): Promise<number> {
  const { io, env } = ctx;
  const style = createStyle(io.color);
  const dataDir = resolveDataDir(ctx, opts.dataDir);
  const destination = io.isTTY
    ? prettyDestination((s) => io.out(s), style)
    : { write: (s: string) => io.out(s) };
  const logger = pino({ level: opts.logLevel, base: { pid: process.pid } }, destination);
  if (heap) logger.info({ heap }, 'V8 heap settings (null: V8 decides)');
  const db = opts.db === undefined || opts.db === ':memory:' ? opts.db : resolve(ctx.deps.cwd, opts.db);
  const store = storeConfig(ctx, opts);
  if (opts.storeWait !== undefined && store?.kind !== 'postgres')
    throw new CliError('--store-wait needs a PostgreSQL store: pass --store postgres://…', EXIT.usage);
  const storeWaitMs = store?.kind === 'postgres' ? (opts.storeWait ?? DEFAULT_STORE_WAIT_MS) : 0;
  const clockOffsetMs =
    opts.clockOffsetMs ?? (env.ROUSE_CLOCK_OFFSET_MS ? parseInteger(env.ROUSE_CLOCK_OFFSET_MS) : 0);

  // Listen for signals before starting: a Ctrl-C that arrives while the server starts (after
  // server.json is written, say) stops it as soon as it is up, instead of killing it half-way; a
  // second one during start-up exits at once.
  const orphaned = new AbortController();
  const interrupted = ctx.untilInterrupted(orphaned.signal);
  let starting = true;
  void interrupted.done.then((sig) => {
    if (!starting || sig === 'abort') return;
    ctx.warn(`received ${sig} while starting: stopping as soon as the coordinator is up (again to exit now)`);
    const now = ctx.untilInterrupted();
    void now.done.then(() => process.exit(EXIT.error));
  });
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
      ...(opts.policies === undefined ? {} : { policiesFile: resolve(ctx.deps.cwd, opts.policies) }),
    });
  } catch (err) {
    interrupted.dispose();
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
    // A policy file that is missing or broken: its errors, one per line, as `rouse policy check` prints them.
    if (err instanceof RouseError && err.code === 'validation_failed' && typeof err.details.file === 'string')
      throw new CliError(err.message, EXIT.usage);
    throw err;
  }

  const tokenLine = (name: keyof typeof TOKEN_ENV_BY_NAME, value: string): string => {
    const envName = TOKEN_ENV_BY_NAME[name];
    const file = server.tokenFiles?.[name] ?? null;
    const where = file ?? (env[envName] ? `from ${envName}` : 'given by option');
    return opts.showTokens ? `${where}  ${style.yellow(value)}` : where;
  };
  // A one-time login link for the dashboard (the token itself never goes into a URL).
  const login = await server.coordinator.dashboard.mintLoginCode('admin');
  const banner = [
    `${style.bold('Rouse')} ${ctx.version} coordinator listening on ${style.bold(server.url)}`,
    ...renderPairs(
      [
        [
          'dashboard',
          `${style.bold(`${server.url}/login?once=${login.code}`)}  ${style.dim('(one use, within 5 minutes; `rouse dashboard` prints another)')}`,
        ],
        ['data dir', server.dataDir],
        ['store', describeStore(server.storeConfig)],
        ['admin token', tokenLine('admin', server.adminToken)],
        [
          'agent token',
          `${tokenLine('agent', server.agentToken)}  ${style.dim('(enrollment: agents register with it)')}`,
        ],
        ['read-only', tokenLine('readonly', server.readonlyToken)],
        ['policies', policiesLine(server, style)],
        ['try', tryLine(ctx, opts.dataDir)],
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

  if (FETCH_BLOCKED_PORTS.has(server.port)) {
    say(
      style.yellow(
        `warning: port ${server.port} is one that browsers and Node's fetch refuse to connect to ("bad port"): the dashboard cannot be opened on it, and clients that use fetch fail. Pick another --port.`,
      ),
    );
  }

  // Under npm (npx, npm exec, npm run) a signal to npm is not passed on: stop when npm goes away.
  // Elsewhere the parent may go on purpose (`nohup rouse serve &`), and signals reach this process.
  starting = false;
  let formerParent: number | null = null;
  const stopWatching = env.npm_command
    ? watchParent((pid) => {
        formerParent = pid;
        orphaned.abort();
      })
    : () => {};
  const signal = await interrupted.done;
  interrupted.dispose();
  stopWatching();
  if (formerParent !== null)
    logger.info(
      { parentPid: formerParent },
      'the process that started rouse serve has exited; shutting down',
    );
  else logger.info({ signal }, 'shutting down');
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

/** The banner's "try" line, written the way this user runs rouse (`rouse`, `npx rouse`, …). */
function tryLine(ctx: CliContext, dataDir: string | undefined): string {
  const rouse = rouseCommand({ env: ctx.env, cwd: ctx.deps.cwd, script: ctx.deps.script });
  const where = dataDir === undefined ? '' : ` --data-dir ${shellQuote(dataDir)}`;
  return `${rouse} submit hello '{"n":1}'${where} && ${rouse} tasks${where}`;
}
