/**
 * Worker options: `WorkerOptions` → {@link resolveWorkerOptions} → `ResolvedWorkerOptions`.
 * Every default lives here; bad values are rejected with an error naming the option and the rule.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidOptionError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ResolvedRetryOptions, RetryOptions } from '../retry.js';
import type { AgentIdentityOptions, ResolvedAgentIdentity } from '../runtime/agent-identity.js';
import { NAME, resolveAgentOptions } from '../runtime/agent-options.js';
import { DEFAULT_START_TIMEOUT_MS } from '../runtime/register.js';
import {
  type ResolvedSnapshotOptions,
  resolveSnapshotOptions,
  type SnapshotOptions,
} from '../runtime/snapshots.js';
import type { FetchFn } from '../transport.js';
import type { TaskHandler } from './task-context.js';

export interface WorkerOptions extends AgentIdentityOptions, SnapshotOptions {
  /** Base URL of the coordinator, e.g. `http://127.0.0.1:7070`. */
  url: string;
  /** Enrollment (or admin) token used once to register; the worker then acts with its agent token. */
  token: string;
  /** Selects the agent's policy on the coordinator. */
  agentType: string;
  /** A name for humans. @default `${hostname}/${pid}` */
  name?: string;
  /** Labels of the agent. @default {} */
  labels?: Record<string, string>;
  /** Task types to claim. @default the keys of `handlers` */
  taskTypes?: string[];
  /** One handler for every type. Give either `handler` or `handlers`. */
  handler?: TaskHandler;
  /** A handler per task type. Give either `handler` or `handlers`. */
  handlers?: Record<string, TaskHandler>;
  /** Tasks run at once (1..1000). @default 1 */
  concurrency?: number;
  /** Heartbeat interval; tasks with a shorter `timing.heartbeatIntervalMs` beat faster. @default the coordinator's (register response) */
  heartbeatIntervalMs?: number;
  /**
   * Time limit of one heartbeat request. Short on purpose: a heartbeat that times out is how the worker
   * notices a connection that died silently (it then aborts its long-poll claim and reconnects).
   * @default the heartbeat interval, within [1000, 5000]
   */
  heartbeatTimeoutMs?: number;
  /**
   * How long `start()` waits for a coordinator that is not up yet (retrying registration with backoff,
   * each wait logged); 0 fails at the first refusal. @default 60000
   */
  startTimeoutMs?: number;
  /** Long-poll wait of a claim (0..60000). @default 20000 */
  waitMs?: number;
  /** Directory of the spool of undelivered results. @default `${os.tmpdir()}/rouse-spool/${agentType}` */
  spoolDir?: string;
  /** A pino-compatible logger. @default silent */
  logger?: Logger;
  /** Signals that trigger a graceful stop while the worker runs; `false` installs none. @default ['SIGTERM', 'SIGINT'] */
  shutdownSignals?: NodeJS.Signals[] | false;
  /**
   * How long a graceful stop lets running handlers finish before aborting them; their tasks are then
   * handed back by the agent's leave (`timeout`, claimable again at once). @default 10000
   */
  shutdownGraceMs?: number;
  /** Retry policy of transient network errors (requests and the claim loop's backoff). */
  retry?: RetryOptions;
  /** Time limit of one request; a long-poll claim gets `waitMs` + min(this, 5000). @default 30000 */
  requestTimeoutMs?: number;
  /** How often buffered `ctx.log` lines are sent. @default 250 */
  logFlushIntervalMs?: number;
  /** A `fetch` implementation. @default node:http with a keep-alive agent */
  fetch?: FetchFn;
  /**
   * Send claims, heartbeats and completions as frames over one upgraded connection (falls back to
   * HTTP by itself when the coordinator does not upgrade; not used with `fetch`). @default true
   */
  callStream?: boolean;
}

export interface ResolvedWorkerOptions extends ResolvedAgentIdentity, ResolvedSnapshotOptions {
  url: string;
  token: string;
  agentType: string;
  name: string;
  labels: Record<string, string>;
  taskTypes: string[];
  /** Handler per claimed type. */
  handlers: Map<string, TaskHandler>;
  concurrency: number;
  heartbeatIntervalMs: number | undefined;
  /** undefined: derived from the interval ({@link heartbeatTimeoutFor}). */
  heartbeatTimeoutMs: number | undefined;
  startTimeoutMs: number;
  waitMs: number;
  spoolDir: string;
  logger: Logger;
  shutdownSignals: NodeJS.Signals[];
  shutdownGraceMs: number;
  retry: ResolvedRetryOptions;
  requestTimeoutMs: number;
  logFlushIntervalMs: number;
  fetch: FetchFn | undefined;
  callStream: boolean;
}

export const WORKER_DEFAULTS = Object.freeze({
  concurrency: 1,
  waitMs: 20_000,
  shutdownSignals: ['SIGTERM', 'SIGINT'] as NodeJS.Signals[],
  shutdownGraceMs: 10_000,
  requestTimeoutMs: 30_000,
  logFlushIntervalMs: 250,
  startTimeoutMs: DEFAULT_START_TIMEOUT_MS,
});

export function resolveWorkerOptions(options: WorkerOptions): ResolvedWorkerOptions {
  const common = resolveAgentOptions(options);
  const o = options;
  if ((o.handler === undefined) === (o.handlers === undefined)) {
    throw new InvalidOptionError('handler', 'give exactly one of handler or handlers');
  }
  if (o.handler !== undefined && typeof o.handler !== 'function') {
    throw new InvalidOptionError('handler', 'must be a function (task, ctx) => Promise<result>');
  }
  const taskTypes = o.taskTypes ?? (o.handlers ? Object.keys(o.handlers) : undefined);
  if (!Array.isArray(taskTypes) || taskTypes.length === 0 || taskTypes.length > 64) {
    throw new InvalidOptionError('taskTypes', 'must list 1 to 64 task types', taskTypes);
  }
  for (const t of taskTypes) {
    if (typeof t !== 'string' || !NAME.test(t)) {
      throw new InvalidOptionError(
        'taskTypes',
        'entries must be 1-128 characters of letters, digits, . _ : -',
        t,
      );
    }
  }
  const handlers = new Map<string, TaskHandler>();
  for (const t of taskTypes) {
    const h = o.handler ?? o.handlers?.[t];
    if (typeof h !== 'function')
      throw new InvalidOptionError(`handlers.${t}`, 'must be a function: every task type needs a handler');
    handlers.set(t, h);
  }
  for (const k of Object.keys(o.handlers ?? {})) {
    if (!taskTypes.includes(k))
      throw new InvalidOptionError(
        `handlers.${k}`,
        `has no task type in taskTypes (${taskTypes.join(', ')})`,
      );
  }
  const concurrency = o.concurrency ?? WORKER_DEFAULTS.concurrency;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000) {
    throw new InvalidOptionError('concurrency', 'must be an integer from 1 to 1000', concurrency);
  }
  const waitMs = o.waitMs ?? WORKER_DEFAULTS.waitMs;
  if (!Number.isInteger(waitMs) || waitMs < 0 || waitMs > 60_000) {
    throw new InvalidOptionError('waitMs', 'must be an integer from 0 to 60000', waitMs);
  }
  const shutdownGraceMs = o.shutdownGraceMs ?? WORKER_DEFAULTS.shutdownGraceMs;
  if (!Number.isInteger(shutdownGraceMs) || shutdownGraceMs < 0) {
    throw new InvalidOptionError('shutdownGraceMs', 'must be an integer >= 0', shutdownGraceMs);
  }
  const logFlushIntervalMs = o.logFlushIntervalMs ?? WORKER_DEFAULTS.logFlushIntervalMs;
  if (!Number.isInteger(logFlushIntervalMs) || logFlushIntervalMs < 1) {
    throw new InvalidOptionError('logFlushIntervalMs', 'must be an integer >= 1', logFlushIntervalMs);
  }
  if (o.spoolDir !== undefined && (typeof o.spoolDir !== 'string' || o.spoolDir === '')) {
    throw new InvalidOptionError('spoolDir', 'must be a directory path', o.spoolDir);
  }
  return {
    ...common,
    ...resolveSnapshotOptions(o),
    taskTypes: [...taskTypes],
    handlers,
    concurrency,
    waitMs,
    spoolDir: o.spoolDir ?? join(tmpdir(), 'rouse-spool', o.agentType),
    shutdownGraceMs,
    logFlushIntervalMs,
  };
}
