/**
 * The coordinator process assembled: data directory, tokens, store (SQLite by default, or
 * PostgreSQL shared by several coordinators: `server-store.ts`), coordinator, HTTP app.
 * `startRouseServer()` is what `rouse serve` (and tests, and the demo) call; it does nothing at import.
 *
 * `<dataDir>/server.json` (`{url, pid, startedAt, version}`) tells local CLI commands where the running
 * coordinator listens; it is removed on close. On SQLite the server holds the database's serving lock
 * while it runs (`store/sqlite/serve-lock.ts`): a second server on the same file is refused.
 */
import { readFileSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { type Logger, pino } from 'pino';
import { buildApp } from './api/app.js';
import type { ApiLimits } from './api/limits.js';
import { loadToken } from './config/tokens.js';
import type { Clock } from './core/clock.js';
import { ValidationError } from './core/errors.js';
import {
  defaultSqlitePath,
  describeStore,
  explainStoreOpenFailure,
  isPassingStoreOpenFailure,
  openStore,
  type ResolvedStoreConfig,
  resolveStoreConfig,
  type StoreConfig,
} from './server-store.js';
import type { Coordinator } from './services/coordinator.js';
import type { CoordinatorOptions } from './services/coordinator-options.js';
import { createCoordinator } from './services/create-coordinator.js';
import { createPolicyRegistry, type PolicyRegistry } from './services/policy-registry.js';
import { skewedClock } from './services/store-clock.js';
import { lockSqliteForServing, type ServeLock } from './store/sqlite/serve-lock.js';
import type { Store } from './store/store.js';
import { systemClock } from './system-clock.js';

/** Coordinator tuning passed through unchanged (defaults: `services/coordinator-options.ts`). */
export type CoordinatorTuning = Pick<
  CoordinatorOptions,
  | 'timingDefaults'
  | 'backoff'
  | 'writeBackGraceMs'
  | 'maxLogBytesPerTask'
  | 'defaultMaxAttempts'
  | 'restartGraceMs'
  | 'sweepIntervalMs'
  | 'shardLeaseTtlMs'
  | 'coordinatorId'
>;

const TUNING_KEYS = [
  'timingDefaults',
  'backoff',
  'writeBackGraceMs',
  'maxLogBytesPerTask',
  'defaultMaxAttempts',
  'restartGraceMs',
  'sweepIntervalMs',
  'shardLeaseTtlMs',
  'coordinatorId',
] as const satisfies readonly (keyof CoordinatorTuning)[];

export interface RouseServerOptions extends Partial<CoordinatorTuning> {
  /** TCP port; 0 picks a free one (read it back from `RouseServer.port`). @default 7070 */
  port?: number;
  /** Address to bind. @default '127.0.0.1' */
  host?: string;
  /** Database, blobs, token files and server.json live here (created with mode 0700). @default './.rouse' */
  dataDir?: string;
  /** SQLite database file, or ':memory:' (when `store` is SQLite). @default '<dataDir>/rouse.db' */
  db?: string;
  /**
   * The store: a config object, or a URL string (`postgres://…` for PostgreSQL, shared by several
   * coordinators; `sqlite` or `sqlite:<path>`). @default SQLite at `db`
   */
  store?: string | StoreConfig;
  /**
   * Shift this coordinator's clock by this much (tests: a coordinator whose clock is wrong). Lease
   * timers follow the store's clock anyway (PostgreSQL); on SQLite the store's clock moves with it.
   * @default 0
   */
  clockOffsetMs?: number;
  /**
   * How long start-up waits for a store that is not reachable yet — refused, timing out, starting
   * up (a database started alongside the coordinator) — trying again every second. Failures waiting
   * cannot cure (a wrong password, a missing database) end the start at once. @default 0
   */
  storeWaitMs?: number;
  /** Admin token. @default read from `<dataDir>/admin.token`, else generated there (mode 0600) */
  adminToken?: string;
  /** Agent enrollment token. @default read from `<dataDir>/agent.token`, else generated there */
  agentToken?: string;
  /** Read-only token. @default read from `<dataDir>/readonly.token`, else generated there */
  readonlyToken?: string;
  /** pino level of the logger created when `logger` is not given. @default 'info' */
  logLevel?: string;
  /** @default pino({ level: logLevel }) on stdout */
  logger?: Logger;
  /** @default systemClock() */
  clock?: Clock;
  /** API body limits. @default DEFAULT_API_LIMITS */
  limits?: ApiLimits;
  /** Serve `GET /metrics` without a token. @default false */
  metricsPublic?: boolean;
  /**
   * The watchdog's policy file (YAML): per agent type heartbeat timing, detectors and recovery, per
   * task type timing defaults. Hot-reloaded: a valid edit applies within a second, an invalid one is
   * logged and the policies in force stay. A bad file at start fails the start. @default
   * `<dataDir>/policies.yaml` when it exists (and once it appears), else the built-in defaults
   */
  policiesFile?: string;
  /** How often the policy file is looked at for changes. @default 250 */
  policiesPollMs?: number;
  /**
   * On close, in-flight requests get this long to finish before remaining connections are cut
   * (a client that connected but never sent a request would otherwise hold close for ~60 s).
   * @default 1000
   */
  shutdownGraceMs?: number;
}

export interface ResolvedRouseServerOptions extends Partial<CoordinatorTuning> {
  port: number;
  host: string;
  /** Absolute. */
  dataDir: string;
  db: string;
  store: ResolvedStoreConfig;
  storeWaitMs: number;
  adminToken: string | undefined;
  agentToken: string | undefined;
  readonlyToken: string | undefined;
  logLevel: string;
  logger: Logger;
  clock: Clock;
  limits: ApiLimits;
  metricsPublic: boolean;
  shutdownGraceMs: number;
  /** The policy file, and whether it may be missing (the data directory's default). */
  policies: { file: string; optional: boolean; pollMs: number };
}

export interface RouseServer {
  /** `http://host:port`, usable from this machine (a wildcard bind is reported as loopback). */
  url: string;
  port: number;
  host: string;
  dataDir: string;
  adminToken: string;
  agentToken: string;
  readonlyToken: string;
  /** Where each token lives, or null when it was given explicitly. */
  tokenFiles: { admin: string | null; agent: string | null; readonly: string | null };
  coordinator: Coordinator;
  store: Store;
  /** Which store, as resolved from the options. */
  storeConfig: ResolvedStoreConfig;
  app: FastifyInstance;
  /** The policies in force and where they came from (hot-reloaded). */
  policies: PolicyRegistry;
  logger: Logger;
  /** Stop accepting, release long-polls and event streams, close the store, remove server.json. Idempotent. */
  close(): Promise<void>;
}

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

export function resolveRouseServerOptions(options: RouseServerOptions = {}): ResolvedRouseServerOptions {
  const port = options.port ?? 7070;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ValidationError('port', `must be an integer from 0 to 65535 (got ${String(port)})`);
  }
  const host = options.host ?? '127.0.0.1';
  if (host.trim() === '') throw new ValidationError('host', 'must not be empty');
  const dataDir = resolve(options.dataDir ?? './.rouse');
  const db = options.db ?? defaultSqlitePath(dataDir);
  if (db === '') throw new ValidationError('db', "must be a file path or ':memory:'");
  const store = resolveStoreConfig(options.store, db);
  const clockOffsetMs = options.clockOffsetMs ?? 0;
  if (!Number.isInteger(clockOffsetMs))
    throw new ValidationError('clockOffsetMs', 'must be an integer (milliseconds)');
  const logLevel = options.logLevel ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ValidationError(
      'logLevel',
      `must be one of ${LOG_LEVELS.join(', ')} (got ${JSON.stringify(logLevel)})`,
    );
  }
  const storeWaitMs = options.storeWaitMs ?? 0;
  if (!Number.isInteger(storeWaitMs) || storeWaitMs < 0) {
    throw new ValidationError('storeWaitMs', 'must be an integer >= 0 (milliseconds)');
  }
  if (
    options.policiesFile !== undefined &&
    (typeof options.policiesFile !== 'string' || options.policiesFile === '')
  ) {
    throw new ValidationError('policiesFile', 'must be a file path');
  }
  const policiesPollMs = options.policiesPollMs ?? 250;
  if (!Number.isInteger(policiesPollMs) || policiesPollMs < 10) {
    throw new ValidationError('policiesPollMs', 'must be an integer >= 10 (milliseconds)');
  }
  const shutdownGraceMs = options.shutdownGraceMs ?? 1000;
  if (!Number.isInteger(shutdownGraceMs) || shutdownGraceMs < 0) {
    throw new ValidationError('shutdownGraceMs', 'must be an integer >= 0');
  }
  const {
    port: _p,
    host: _h,
    dataDir: _d,
    db: _db,
    store: _s,
    storeWaitMs: _w,
    clockOffsetMs: _c,
    logLevel: _l,
    logger,
    clock,
    limits,
    metricsPublic,
    shutdownGraceMs: _g,
    policiesFile: _pf,
    policiesPollMs: _pp,
    ...rest
  } = options;
  return {
    ...rest,
    port,
    host,
    dataDir,
    db,
    store,
    storeWaitMs,
    adminToken: options.adminToken,
    agentToken: options.agentToken,
    readonlyToken: options.readonlyToken,
    logLevel,
    logger: logger ?? pino({ level: logLevel }),
    clock: skewedClock(clock ?? systemClock(), clockOffsetMs),
    limits: limits ?? {},
    metricsPublic: metricsPublic ?? false,
    shutdownGraceMs,
    policies:
      options.policiesFile === undefined
        ? { file: join(dataDir, 'policies.yaml'), optional: true, pollMs: policiesPollMs }
        : { file: resolve(options.policiesFile), optional: false, pollMs: policiesPollMs },
  };
}

/** Open the store, trying again every second for `storeWaitMs` while the failure is a passing one. */
async function openStoreWaiting(o: ResolvedRouseServerOptions): Promise<Store> {
  const deadline = o.clock.now() + o.storeWaitMs;
  for (;;) {
    try {
      return await openStore(o.store, o.clock, (err, what) => o.logger.error({ err }, what));
    } catch (err) {
      const leftMs = deadline - o.clock.now();
      if (leftMs <= 0 || !isPassingStoreOpenFailure(err)) throw err;
      o.logger.warn(
        { reason: explainStoreOpenFailure(err, o.store) ?? String(err), leftMs },
        'waiting for the store to become reachable',
      );
      await sleep(Math.min(STORE_RETRY_MS, leftMs));
    }
  }
}

const STORE_RETRY_MS = 1000;

/** Start a coordinator and its HTTP API. Resolves once it listens. */
export async function startRouseServer(options: RouseServerOptions = {}): Promise<RouseServer> {
  const o = resolveRouseServerOptions(options);
  const logger = o.logger;
  await mkdir(o.dataDir, { recursive: true, mode: 0o700 });
  const [admin, agent, readonly] = await Promise.all([
    loadToken(o.dataDir, 'admin', o.adminToken),
    loadToken(o.dataDir, 'agent', o.agentToken),
    loadToken(o.dataDir, 'readonly', o.readonlyToken),
  ]);
  for (const t of [admin, agent, readonly])
    if (t.generated) logger.info({ file: t.file }, 'generated a token');
  const version = await packageVersion();

  const cleanups: (() => Promise<void>)[] = [];
  const unwind = async () => {
    for (const fn of cleanups.reverse()) await fn().catch((err) => logger.warn({ err }, 'cleanup failed'));
  };
  try {
    const policies = createPolicyRegistry({
      ...o.policies,
      clock: o.clock,
      logger: logger.child({ component: 'policies' }),
    });
    await policies.start();
    cleanups.push(async () => policies.stop());
    const lock = lockSqliteFile(o);
    if (lock) cleanups.push(async () => lock.release());
    const store = await openStoreWaiting(o);
    cleanups.push(() => store.close());
    const coordinator = createCoordinator({
      policies,
      store,
      clock: o.clock,
      logger,
      blobDir: join(o.dataDir, 'blobs'),
      tokens: { admin: admin.token, enrollment: agent.token, readonly: readonly.token },
      ...(o.limits.resultUploadBytes === undefined ? {} : { maxResultBytes: o.limits.resultUploadBytes }),
      ...tuning(o),
    });
    await coordinator.start();
    cleanups.push(() => coordinator.stop());
    const app = buildApp({ coordinator, logger, limits: o.limits, metricsPublic: o.metricsPublic, version });
    cleanups.push(() => app.close());
    await app.listen({ port: o.port, host: o.host });
    const address = app.server.address() as AddressInfo;
    const url = `http://${urlHost(o.host)}:${address.port}`;
    const serverFile = join(o.dataDir, 'server.json');
    const startedAt = o.clock.now();
    await writeJsonAtomic(serverFile, { url, pid: process.pid, startedAt, version });
    logger.info({ url, dataDir: o.dataDir, store: describeStore(o.store) }, 'rouse coordinator listening');

    let closing: Promise<void> | undefined;
    const close = (): Promise<void> => {
      closing ??= (async () => {
        // Stop accepting first; stopping the coordinator then wakes the long-polls that keep it open.
        const appClosed = app.close();
        policies.stop();
        await coordinator.stop();
        // A real timer, not the injected clock: this bounds a socket shutdown, not domain time.
        const cut = setTimeout(() => {
          app.server.closeAllConnections();
          app.callStreams.destroyAll();
        }, o.shutdownGraceMs);
        await appClosed;
        clearTimeout(cut);
        await store.close();
        lock?.release();
        await removeIfOurs(serverFile, url);
        logger.info('rouse coordinator stopped');
      })();
      return closing;
    };

    return {
      url,
      port: address.port,
      host: o.host,
      dataDir: o.dataDir,
      adminToken: admin.token,
      agentToken: agent.token,
      readonlyToken: readonly.token,
      tokenFiles: { admin: admin.file, agent: agent.file, readonly: readonly.file },
      coordinator,
      store,
      storeConfig: o.store,
      app,
      policies,
      logger,
      close,
    };
  } catch (err) {
    await unwind();
    throw err;
  }
}

/** A SQLite file has one coordinator: hold its serving lock (store/sqlite/serve-lock.ts). */
function lockSqliteFile(o: ResolvedRouseServerOptions): ServeLock | undefined {
  if (o.store.kind !== 'sqlite' || o.store.path === ':memory:') return undefined;
  const path = o.store.path;
  return lockSqliteForServing(path, () => {
    // The holder's server.json, when it serves from the directory of the database.
    const info = readServerFile(join(dirname(path), 'server.json'));
    return info ? `pid ${info.pid}, ${info.url}` : null;
  });
}

function tuning(o: ResolvedRouseServerOptions): Partial<CoordinatorTuning> {
  const out: Record<string, unknown> = {};
  for (const key of TUNING_KEYS) if (o[key] !== undefined) out[key] = o[key];
  return out as Partial<CoordinatorTuning>;
}

/** A wildcard bind is reachable on loopback; IPv6 literals need brackets in a URL. */
function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

async function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o644 });
  await rename(temp, file);
}

/** The URL and pid a server.json names; null when it is missing, unreadable or lacks them. */
function readServerFile(file: string): { url: string; pid: number } | null {
  try {
    const info = JSON.parse(readFileSync(file, 'utf8')) as { url?: unknown; pid?: unknown };
    return typeof info.url === 'string' && typeof info.pid === 'number'
      ? { url: info.url, pid: info.pid }
      : null;
  } catch {
    return null;
  }
}

/** Remove server.json unless another server has since written its own. */
async function removeIfOurs(file: string, url: string): Promise<void> {
  const current = readServerFile(file);
  if (current?.url !== url || current.pid !== process.pid) return;
  await rm(file, { force: true }).catch(() => {
    // a file we could not remove is left for the next server to overwrite
  });
}

async function packageVersion(): Promise<string> {
  try {
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}
