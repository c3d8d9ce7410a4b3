/**
 * Every default of the policy file in one place (ms, bytes). A field the file leaves out takes the
 * value here; the few defaults derived from other fields say so.
 */

export const POLICY_DEFAULTS = {
  heartbeat: {
    /** How often the agent should heartbeat. @default 5000 (5 s) */
    expectedIntervalMs: 5000,
    /** heartbeat timeout = timeoutFactor × expectedIntervalMs (two missed beats tolerated). @default 3 */
    timeoutFactor: 3,
    /** Phi-accrual timeouts over the agent's own gaps instead of the fixed one. @default false */
    adaptive: false,
    /** @default 8 (a one-in-10^8 chance that the agent is alive and merely late) */
    phiThreshold: 8,
    /** The floor of adaptive timeouts, as a multiple of expectedIntervalMs (capped at the timeout). @default 2 */
    minTimeoutIntervals: 2,
  },
  /** The first heartbeat must come this long after registering; @default max(30 s, the heartbeat timeout) */
  minStartupTimeoutMs: 30_000,
  /** After each (re)start, nothing opens for this long. @default 0 */
  quietPeriodMs: 0,
  /** A condition must hold this long before the recovery ladder acts. @default 0 */
  forMs: 0,
  stallDetection: {
    /** @default true */
    enabled: true,
    /** The metadata field that carries progress; null = the heartbeat's own progress and phase. @default null */
    progressField: null,
    /** @default 300000 (5 min) */
    stallThresholdMs: 300_000,
  },
  resources: {
    /** @default null (no RSS limit) */
    rssLimitBytes: null,
    /** @default null (no growth rule) */
    rssGrowthBytesPerMin: null,
    /** @default 600000 (10 min) */
    rssWindowMs: 600_000,
    /** The r² the RSS growth fit needs. @default 0.8 */
    minFit: 0.8,
    /** @default null (no CPU rule) */
    cpuPercent: null,
    /** @default 300000 (5 min) */
    cpuWindowMs: 300_000,
    /** @default null (no baseline rule) */
    iterationFactor: null,
    /** @default null (no absolute iteration limit) */
    maxIterationMs: null,
    /** Values a type's baseline needs before the iteration rule uses it. @default 30 */
    minBaselineSamples: 30,
  },
  /** How long an agent may report `error` before `error_persisting` opens; 0 or null in the file = never. @default 300000 (5 min) */
  errorTimeoutMs: 300_000,
} as const;

/** Rung defaults. */
export const RUNG_DEFAULTS = {
  /** Attempts of one rung within its window. @default 1 */
  maxAttempts: 1,
  /** The window attempts are counted in; null = since the condition opened. @default null */
  windowMs: null,
  /** After this long an attempt that has not succeeded counts as failed, by action. */
  timeoutMs: {
    wake: 60_000,
    send_signal: 60_000,
    snapshot_and_restart: 300_000,
    reassign: 300_000,
    alert: 60_000,
    terminate: 60_000,
  },
  /** @default "SIGUSR1" */
  signal: 'SIGUSR1',
  /** How long a snapshot taken by `snapshot_and_restart` is kept. @default 3600000 (1 h) */
  snapshotTtlMs: 3_600_000,
  /** SIGTERM → SIGKILL after this long (`terminate`). @default 15000 */
  graceMs: 15_000,
  /** @default "medium" */
  severity: 'medium',
} as const;

/** Alert grouping and repetition (docs/design.md §6.7). */
export const ALERT_DEFAULTS = {
  /** @default 30000 (30 s) */
  groupWaitMs: 30_000,
  /** @default 300000 (5 min) */
  groupIntervalMs: 300_000,
  /** @default 14400000 (4 h) */
  repeatIntervalMs: 14_400_000,
  /** Escalate one severity level when still firing after this long; null = never. @default 900000 (15 min) */
  escalateAfterMs: 900_000,
} as const;

/** The name of the built-in policy that applies when the file has no `"*"` policy. */
export const BUILT_IN_POLICY_NAME = 'default';
