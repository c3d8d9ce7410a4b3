/**
 * Coordinator options: `CoordinatorOptions → resolveCoordinatorOptions() → ResolvedCoordinatorOptions`.
 * All defaults live here; bad values are rejected naming the option and the rule, never corrected.
 */
import type { Logger } from 'pino';
import { type BackoffOptions, type ResolvedBackoffOptions, resolveBackoffOptions } from '../core/backoff.js';
import type { Clock } from '../core/clock.js';
import { ValidationError } from '../core/errors.js';
import {
  checkTimingMs,
  DEFAULT_TIMING,
  MIN_TIMING_MS,
  resolveTiming,
  type TimingDefaults,
} from '../core/timing.js';
import type { Store } from '../store/store.js';
import { ALERT_DELIVERY_DEFAULTS } from './alerts/alerts.js';
import type { AuthTokens } from './auth.js';
import { fixedPolicies, type PolicyProvider } from './policy-registry.js';

export interface CoordinatorOptions {
  store: Store;
  /** The authoritative clock for leases and timeouts (`systemClock()` at the process edge). */
  clock: Clock;
  logger: Logger;
  /** Directory for result blobs (`<dataDir>/blobs`). */
  blobDir: string;
  tokens: AuthTokens;
  /**
   * Timing defaults for tasks that do not set their own; each at least its `MIN_TIMING_MS` (100 ms,
   * stall timeout 1 s). @default DEFAULT_TIMING (core/timing.ts)
   */
  timingDefaults?: Partial<TimingDefaults>;
  /** Retry backoff. @default 1 s, 2 s, 4 s … capped at 5 min, no jitter */
  backoff?: BackoffOptions;
  /** `maxAttempts` of tasks that do not set it. @default 4 */
  defaultMaxAttempts?: number;
  /** How long a task whose agent reported `executionDone` is kept alive for the write-back. @default 30000 */
  writeBackGraceMs?: number;
  /** Log bytes kept per task; later lines are dropped. @default 1048576 (1 MiB) */
  maxLogBytesPerTask?: number;
  /** Largest result blob accepted by `PUT /result`. @default 268435456 (256 MiB) */
  maxResultBytes?: number;
  /**
   * Sweep of overdue leases in the shards this coordinator owns: a safety net with one coordinator
   * (detection itself is exact, by timer), and how the leases of a coordinator that died are found
   * with several. @default 1000 on SQLite, 250 on PostgreSQL
   */
  sweepIntervalMs?: number;
  /**
   * Lease of this coordinator on its lease shards, renewed every third of it: a coordinator that dies
   * loses its shards to the survivors within this long (plus one renewal). @default 5000
   */
  shardLeaseTtlMs?: number;
  /** This coordinator's name in the shard leases. @default a random `crd_…` id, new at every start */
  coordinatorId?: string;
  /**
   * How often the store's clock is sampled to correct this coordinator's clock (lease timers follow
   * the store's clock). null: never — the store uses this coordinator's clock (SQLite).
   * @default 5000 on PostgreSQL, null on SQLite
   */
  clockSyncIntervalMs?: number | null;
  /** While the store is unreachable, it is pinged this often to notice it is back. @default 500 */
  storeProbeIntervalMs?: number;
  /** Grace for leases loaded after a restart. @default null (each task's `heartbeatTimeoutMs`) */
  restartGraceMs?: number | null;
  /** An agent that has not polled for this long counts as "not polling" in diagnoses. @default 60000 */
  pollStaleAfterMs?: number;
  /** An agent's polls are written to the store at most this often. @default 1000 */
  pollRecordIntervalMs?: number;
  /** A `down`/`rate_limited` report without `retryAfterMs` holds this long unless repeated. @default 60000 */
  dependencyReportTtlMs?: number;
  /**
   * How often this coordinator reads the dependency states others saved (several coordinators on one
   * store: a report through one reaches the claims of the others within this). @default 1000
   */
  dependencyRefreshMs?: number;
  /**
   * A log follower waiting for new lines looks again after this long even when nothing woke it
   * (lines appended through another coordinator of the same store). @default 1000
   */
  logFollowPollMs?: number;
  /**
   * How often result blobs that nothing can read any more are swept (files and PostgreSQL alike).
   * @default 3600000 (1 h)
   */
  blobSweepIntervalMs?: number;
  /** A blob no task refers to, or an upload that never finished, is swept once this old. @default 86400000 (24 h) */
  blobOrphanAgeMs?: number;
  /** The watchdog's policies (per agent type) and task timing defaults (per task type). @default the built-in ones */
  policies?: PolicyProvider;
  /**
   * How often the owner of each lease shard looks for agent leases about to run out (it arms an exact
   * timer for each). @default 500
   */
  agentLeaseSweepMs?: number;
  /** How far ahead that look reaches; must exceed `agentLeaseSweepMs`. @default 2000 */
  agentLeaseLookaheadMs?: number;
  /** How often per-type baselines are saved and everyone's read back. @default 10000 */
  baselineFlushMs?: number;
  /** How often expired effect keys are deleted. @default 600000 */
  effectSweepIntervalMs?: number;
  /**
   * How often the recovery ladder looks at every agent with an open condition or intervention in the
   * lease shards held here (it also runs at once when a condition opens here or a command is answered). @default 1000
   */
  ladderSweepMs?: number;
  /**
   * How often a long-poll for an agent's commands (`POST /v1/agents/{id}/commands/next`) looks for
   * commands queued through another coordinator (those queued through this one wake it at once). @default 250
   */
  commandPollMs?: number;
  /** How often expired agent snapshots (and their blobs) are deleted. @default 600000 */
  snapshotSweepIntervalMs?: number;
  /**
   * The largest agent snapshot state, as JSON: a full snapshot, or the state a compaction composes,
   * past it is refused with `413 payload_too_large`. @default 8388608 (8 MiB)
   */
  snapshotMaxBytes?: number;
  /** A snapshot base larger than this (as JSON) is kept in the blob store instead of its row. @default 262144 (256 KiB) */
  snapshotInlineMaxBytes?: number;
  /** A snapshot is compacted (base and deltas composed into a new base) when a patch finds this many deltas. @default 32 */
  snapshotMaxDeltas?: number;
  /** ... or when its deltas with the new patch would pass this many bytes. @default 262144 (256 KiB) */
  snapshotMaxDeltasBytes?: number;
  /**
   * Alert deliveries: each attempt's timeout (@default 10000), attempts per notification and channel
   * (@default 5), the backoff between them (@default 1 s doubling, capped at 1 min), and how often the
   * alert loop looks when nothing is due (@default 5000).
   */
  alertDelivery?: { timeoutMs?: number; maxAttempts?: number; backoff?: BackoffOptions; pollMs?: number };
}

export interface ResolvedCoordinatorOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  blobDir: string;
  tokens: AuthTokens;
  timingDefaults: TimingDefaults;
  backoff: ResolvedBackoffOptions;
  defaultMaxAttempts: number;
  writeBackGraceMs: number;
  maxLogBytesPerTask: number;
  maxResultBytes: number;
  sweepIntervalMs: number;
  shardLeaseTtlMs: number;
  coordinatorId: string | null;
  clockSyncIntervalMs: number | null;
  storeProbeIntervalMs: number;
  restartGraceMs: number | null;
  pollStaleAfterMs: number;
  pollRecordIntervalMs: number;
  dependencyReportTtlMs: number;
  dependencyRefreshMs: number;
  logFollowPollMs: number;
  blobSweepIntervalMs: number;
  blobOrphanAgeMs: number;
  policies: PolicyProvider;
  agentLeaseSweepMs: number;
  agentLeaseLookaheadMs: number;
  baselineFlushMs: number;
  effectSweepIntervalMs: number;
  ladderSweepMs: number;
  commandPollMs: number;
  snapshotSweepIntervalMs: number;
  snapshotMaxBytes: number;
  snapshotInlineMaxBytes: number;
  snapshotMaxDeltas: number;
  snapshotMaxDeltasBytes: number;
  alertDelivery: { timeoutMs: number; maxAttempts: number; backoff: ResolvedBackoffOptions; pollMs: number };
}

export const COORDINATOR_DEFAULTS = {
  defaultMaxAttempts: 4,
  writeBackGraceMs: 30_000,
  maxLogBytesPerTask: 1024 * 1024,
  maxResultBytes: 256 * 1024 * 1024,
  sweepIntervalMs: 1000,
  shardLeaseTtlMs: 5000,
  clockSyncIntervalMs: 5000,
  storeProbeIntervalMs: 500,
  restartGraceMs: null,
  pollStaleAfterMs: 60_000,
  pollRecordIntervalMs: 1000,
  dependencyReportTtlMs: 60_000,
  dependencyRefreshMs: 1000,
  logFollowPollMs: 1000,
  blobSweepIntervalMs: 3_600_000,
  blobOrphanAgeMs: 86_400_000,
  agentLeaseSweepMs: 500,
  agentLeaseLookaheadMs: 2000,
  baselineFlushMs: 10_000,
  effectSweepIntervalMs: 600_000,
  ladderSweepMs: 1000,
  commandPollMs: 250,
  snapshotSweepIntervalMs: 600_000,
  snapshotMaxBytes: 8 * 1024 * 1024,
  snapshotInlineMaxBytes: 256 * 1024,
  snapshotMaxDeltas: 32,
  snapshotMaxDeltasBytes: 256 * 1024,
} as const;

/** Defaults that differ on PostgreSQL (several coordinators). */
export const POSTGRES_COORDINATOR_DEFAULTS = { sweepIntervalMs: 250 } as const;

export function resolveCoordinatorOptions(options: CoordinatorOptions): ResolvedCoordinatorOptions {
  const { store, clock, logger, blobDir, tokens } = options;
  if (!store) throw new ValidationError('store', 'is required');
  if (!clock) throw new ValidationError('clock', 'is required');
  if (!logger) throw new ValidationError('logger', 'is required');
  if (typeof blobDir !== 'string' || blobDir.length === 0)
    throw new ValidationError('blobDir', 'must be a non-empty path');
  checkTokens(tokens);

  const pick = <K extends keyof typeof COORDINATOR_DEFAULTS>(k: K) => options[k] ?? COORDINATOR_DEFAULTS[k];
  const r: ResolvedCoordinatorOptions = {
    store,
    clock,
    logger,
    blobDir,
    tokens,
    timingDefaults: resolveTimingDefaults(options.timingDefaults),
    backoff: resolveBackoffOptions(options.backoff),
    defaultMaxAttempts: pick('defaultMaxAttempts'),
    writeBackGraceMs: pick('writeBackGraceMs'),
    maxLogBytesPerTask: pick('maxLogBytesPerTask'),
    maxResultBytes: pick('maxResultBytes'),
    sweepIntervalMs:
      options.sweepIntervalMs ??
      (store.kind === 'postgres'
        ? POSTGRES_COORDINATOR_DEFAULTS.sweepIntervalMs
        : COORDINATOR_DEFAULTS.sweepIntervalMs),
    shardLeaseTtlMs: pick('shardLeaseTtlMs'),
    coordinatorId: options.coordinatorId ?? null,
    clockSyncIntervalMs:
      options.clockSyncIntervalMs === undefined
        ? store.kind === 'postgres'
          ? COORDINATOR_DEFAULTS.clockSyncIntervalMs
          : null
        : options.clockSyncIntervalMs,
    storeProbeIntervalMs: pick('storeProbeIntervalMs'),
    restartGraceMs: options.restartGraceMs ?? null,
    pollStaleAfterMs: pick('pollStaleAfterMs'),
    pollRecordIntervalMs: pick('pollRecordIntervalMs'),
    dependencyReportTtlMs: pick('dependencyReportTtlMs'),
    dependencyRefreshMs: pick('dependencyRefreshMs'),
    logFollowPollMs: pick('logFollowPollMs'),
    blobSweepIntervalMs: pick('blobSweepIntervalMs'),
    blobOrphanAgeMs: pick('blobOrphanAgeMs'),
    policies: options.policies ?? fixedPolicies(),
    agentLeaseSweepMs: pick('agentLeaseSweepMs'),
    agentLeaseLookaheadMs: pick('agentLeaseLookaheadMs'),
    baselineFlushMs: pick('baselineFlushMs'),
    effectSweepIntervalMs: pick('effectSweepIntervalMs'),
    ladderSweepMs: pick('ladderSweepMs'),
    commandPollMs: pick('commandPollMs'),
    snapshotSweepIntervalMs: pick('snapshotSweepIntervalMs'),
    snapshotMaxBytes: pick('snapshotMaxBytes'),
    snapshotInlineMaxBytes: pick('snapshotInlineMaxBytes'),
    snapshotMaxDeltas: pick('snapshotMaxDeltas'),
    snapshotMaxDeltasBytes: pick('snapshotMaxDeltasBytes'),
    alertDelivery: {
      timeoutMs: options.alertDelivery?.timeoutMs ?? ALERT_DELIVERY_DEFAULTS.timeoutMs,
      maxAttempts: options.alertDelivery?.maxAttempts ?? ALERT_DELIVERY_DEFAULTS.maxAttempts,
      backoff:
        options.alertDelivery?.backoff === undefined
          ? ALERT_DELIVERY_DEFAULTS.backoff
          : resolveBackoffOptions(options.alertDelivery.backoff),
      pollMs: options.alertDelivery?.pollMs ?? ALERT_DELIVERY_DEFAULTS.pollMs,
    },
  };
  checkInt('defaultMaxAttempts', r.defaultMaxAttempts, 1);
  checkInt('writeBackGraceMs', r.writeBackGraceMs, 0);
  checkInt('maxLogBytesPerTask', r.maxLogBytesPerTask, 0);
  checkInt('maxResultBytes', r.maxResultBytes, 1);
  checkInt('sweepIntervalMs', r.sweepIntervalMs, 10);
  checkInt('shardLeaseTtlMs', r.shardLeaseTtlMs, 30);
  if (r.coordinatorId !== null && (typeof r.coordinatorId !== 'string' || r.coordinatorId.length === 0))
    throw new ValidationError('coordinatorId', 'must be a non-empty string');
  if (r.clockSyncIntervalMs !== null) checkInt('clockSyncIntervalMs', r.clockSyncIntervalMs, 10);
  checkInt('storeProbeIntervalMs', r.storeProbeIntervalMs, 10);
  if (r.restartGraceMs !== null) checkInt('restartGraceMs', r.restartGraceMs, 0);
  checkInt('pollStaleAfterMs', r.pollStaleAfterMs, 1);
  checkInt('pollRecordIntervalMs', r.pollRecordIntervalMs, 0);
  checkInt('dependencyReportTtlMs', r.dependencyReportTtlMs, 1);
  checkInt('dependencyRefreshMs', r.dependencyRefreshMs, 10);
  checkInt('logFollowPollMs', r.logFollowPollMs, 10);
  checkInt('blobSweepIntervalMs', r.blobSweepIntervalMs, 1000);
  checkInt('blobOrphanAgeMs', r.blobOrphanAgeMs, 60_000);
  checkInt('agentLeaseSweepMs', r.agentLeaseSweepMs, 10);
  checkInt('agentLeaseLookaheadMs', r.agentLeaseLookaheadMs, 10);
  if (r.agentLeaseLookaheadMs <= r.agentLeaseSweepMs) {
    throw new ValidationError(
      'agentLeaseLookaheadMs',
      `must exceed agentLeaseSweepMs (${r.agentLeaseSweepMs}): each look must reach past the next`,
    );
  }
  checkInt('baselineFlushMs', r.baselineFlushMs, 100);
  checkInt('effectSweepIntervalMs', r.effectSweepIntervalMs, 1000);
  checkInt('ladderSweepMs', r.ladderSweepMs, 10);
  checkInt('commandPollMs', r.commandPollMs, 10);
  checkInt('snapshotSweepIntervalMs', r.snapshotSweepIntervalMs, 1000);
  checkInt('snapshotMaxBytes', r.snapshotMaxBytes, 1024);
  checkInt('snapshotInlineMaxBytes', r.snapshotInlineMaxBytes, 1);
  checkInt('snapshotMaxDeltas', r.snapshotMaxDeltas, 1);
  checkInt('snapshotMaxDeltasBytes', r.snapshotMaxDeltasBytes, 1);
  checkInt('alertDelivery.timeoutMs', r.alertDelivery.timeoutMs, 1);
  checkInt('alertDelivery.maxAttempts', r.alertDelivery.maxAttempts, 1);
  checkInt('alertDelivery.pollMs', r.alertDelivery.pollMs, 10);
  if (typeof r.policies?.current !== 'function' || typeof r.policies.response !== 'function')
    throw new ValidationError('policies', 'must be a policy provider ({ current(), response() })');
  return r;
}

function resolveTimingDefaults(partial: Partial<TimingDefaults> = {}): TimingDefaults {
  const d: TimingDefaults = { ...DEFAULT_TIMING };
  for (const [k, v] of Object.entries(partial))
    if (v !== undefined) (d as unknown as Record<string, unknown>)[k] = v;
  for (const field of ['heartbeatIntervalMs', 'claimTimeoutMs', 'stallTimeoutMs'] as const)
    checkTimingMs(`timingDefaults.${field}`, d[field], MIN_TIMING_MS[field]);
  if (d.executionTimeoutMs !== null)
    checkTimingMs(
      'timingDefaults.executionTimeoutMs',
      d.executionTimeoutMs,
      MIN_TIMING_MS.executionTimeoutMs,
    );
  if (!(Number.isFinite(d.timeoutFactor) && d.timeoutFactor > 1)) {
    throw new ValidationError(
      'timingDefaults.timeoutFactor',
      'must be a number > 1 (heartbeatTimeoutMs must exceed heartbeatIntervalMs)',
    );
  }
  try {
    resolveTiming({}, d);
  } catch (err) {
    if (err instanceof ValidationError)
      throw new ValidationError(`timingDefaults (${err.message})`, 'must resolve to valid timing');
    throw err;
  }
  return d;
}

function checkTokens(tokens: AuthTokens | undefined): void {
  if (!tokens) throw new ValidationError('tokens', 'is required ({ admin, enrollment, readonly? })');
  const named: [string, string | undefined][] = [
    ['tokens.admin', tokens.admin],
    ['tokens.enrollment', tokens.enrollment],
  ];
  if (tokens.readonly !== undefined) named.push(['tokens.readonly', tokens.readonly]);
  const seen = new Set<string>();
  for (const [field, value] of named) {
    if (typeof value !== 'string' || value.length === 0)
      throw new ValidationError(field, 'must be a non-empty string');
    if (value.startsWith('rsa_'))
      throw new ValidationError(field, 'must not start with "rsa_" (reserved for agent tokens)');
    if (seen.has(value)) throw new ValidationError(field, 'must differ from the other tokens');
    seen.add(value);
  }
}

function checkInt(field: string, v: number, min: number): void {
  if (!Number.isInteger(v) || v < min) throw new ValidationError(field, `must be an integer >= ${min}`);
}
