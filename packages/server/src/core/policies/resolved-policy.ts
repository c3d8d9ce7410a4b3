/**
 * A policy as the coordinator applies it: every field filled (ms, bytes), the recovery ladder typed
 * by action. The same shape as the wire's `PolicyView`, whose `recoveryActions` are untyped JSON.
 */
import type { ConditionKind, JsonObject, PolicyView } from '@rouse/protocol';
import { BUILT_IN_POLICY_NAME, POLICY_DEFAULTS, RUNG_DEFAULTS } from './policy-defaults.js';
import type { ON_CONDITIONS, PolicyInput, RungInput, SEVERITIES, SignalName } from './policy-schema.js';

/** What a rung listens for: a condition kind, `stall_detected` (= `progress_stalled`), `recovery_failed`, `any`. */
export type OnCondition = (typeof ON_CONDITIONS)[number];
export type Severity = (typeof SEVERITIES)[number];

/** Fields every rung has. */
export interface RungCommon {
  onCondition: OnCondition;
  /** Attempts of this rung within `windowMs`. */
  maxAttempts: number;
  /** The window attempts are counted in; null = since the condition opened. */
  windowMs: number | null;
  /** An attempt that has not succeeded after this long counts as failed. */
  timeoutMs: number;
}

/** One rung of the recovery ladder (docs/design.md §6.4), by action. */
export type RecoveryAction =
  | (RungCommon & { action: 'wake' })
  | (RungCommon & { action: 'send_signal'; signal: SignalName })
  | (RungCommon & { action: 'snapshot_and_restart'; snapshotTtlMs: number })
  | (RungCommon & { action: 'reassign' })
  | (RungCommon & { action: 'alert'; channels: string[]; severity: Severity })
  | (RungCommon & { action: 'terminate'; graceMs: number });

/** A policy with every default filled in. */
export interface ResolvedPolicy extends Omit<PolicyView, 'recoveryActions'> {
  recoveryActions: RecoveryAction[];
}

/** Whether a rung listens for a condition kind (`stall_detected` is `progress_stalled`; `any` is every kind). */
export function rungMatches(rung: RecoveryAction, condition: ConditionKind | 'recovery_failed'): boolean {
  if (rung.onCondition === 'any') return condition !== 'recovery_failed';
  if (rung.onCondition === 'stall_detected') return condition === 'progress_stalled';
  return rung.onCondition === condition;
}

/**
 * Fills one parsed policy's defaults. `channelNames`: the channels the file defines (an alert rung
 * that names none alerts through all of them).
 */
export function resolvePolicy(p: PolicyInput, channelNames: readonly string[]): ResolvedPolicy {
  const d = POLICY_DEFAULTS;
  const hb = p.heartbeat ?? {};
  const expectedIntervalMs = hb.expected_interval ?? d.heartbeat.expectedIntervalMs;
  const timeoutFactor = hb.timeout_factor ?? d.heartbeat.timeoutFactor;
  const timeoutMs = Math.round(timeoutFactor * expectedIntervalMs);
  const stall = p.stall_detection ?? {};
  const r = p.resources ?? {};
  const errorTimeout = p.error_timeout === undefined ? d.errorTimeoutMs : p.error_timeout;
  return {
    name: p.name,
    agentType: p.agent_type,
    heartbeat: {
      expectedIntervalMs,
      timeoutFactor,
      adaptive: hb.adaptive ?? d.heartbeat.adaptive,
      phiThreshold: hb.phi_threshold ?? d.heartbeat.phiThreshold,
      minTimeoutMs:
        hb.min_timeout ?? Math.min(timeoutMs, d.heartbeat.minTimeoutIntervals * expectedIntervalMs),
    },
    startupTimeoutMs: p.startup_timeout ?? Math.max(d.minStartupTimeoutMs, timeoutMs),
    quietPeriodMs: p.quiet_period ?? d.quietPeriodMs,
    forMs: p.for ?? d.forMs,
    stallDetection: {
      enabled: stall.enabled ?? d.stallDetection.enabled,
      progressField: stall.progress_field ?? d.stallDetection.progressField,
      stallThresholdMs: stall.stall_threshold ?? d.stallDetection.stallThresholdMs,
    },
    resources: {
      rssLimitBytes: orDefault(r.rss_limit, d.resources.rssLimitBytes),
      rssGrowthBytesPerMin: orDefault(r.rss_growth, d.resources.rssGrowthBytesPerMin),
      rssWindowMs: r.rss_window ?? d.resources.rssWindowMs,
      minFit: r.min_fit ?? d.resources.minFit,
      cpuPercent: orDefault(r.cpu_percent, d.resources.cpuPercent),
      cpuWindowMs: r.cpu_window ?? d.resources.cpuWindowMs,
      iterationFactor: orDefault(r.iteration_factor, d.resources.iterationFactor),
      maxIterationMs: orDefault(r.max_iteration, d.resources.maxIterationMs),
      minBaselineSamples: r.min_baseline_samples ?? d.resources.minBaselineSamples,
    },
    errorTimeoutMs: errorTimeout === 0 ? null : errorTimeout,
    dependencies: [...new Set(p.dependencies ?? [])],
    recoveryActions: (p.recovery_actions ?? []).map((rung) => resolveRung(rung, channelNames)),
  };
}

function resolveRung(rung: RungInput, channelNames: readonly string[]): RecoveryAction {
  const common: RungCommon = {
    onCondition: rung.on_condition,
    maxAttempts: rung.max_attempts ?? RUNG_DEFAULTS.maxAttempts,
    windowMs: rung.window ?? RUNG_DEFAULTS.windowMs,
    timeoutMs: rung.timeout ?? RUNG_DEFAULTS.timeoutMs[rung.action],
  };
  switch (rung.action) {
    case 'wake':
    case 'reassign':
      return { action: rung.action, ...common };
    case 'send_signal':
      return { action: 'send_signal', ...common, signal: rung.signal ?? RUNG_DEFAULTS.signal };
    case 'snapshot_and_restart':
      return {
        action: 'snapshot_and_restart',
        ...common,
        snapshotTtlMs: rung.snapshot_ttl ?? RUNG_DEFAULTS.snapshotTtlMs,
      };
    case 'alert':
      return {
        action: 'alert',
        ...common,
        channels: [...(rung.channels ?? channelNames)],
        severity: rung.severity ?? RUNG_DEFAULTS.severity,
      };
    case 'terminate':
      return { action: 'terminate', ...common, graceMs: rung.grace ?? RUNG_DEFAULTS.graceMs };
  }
}

/** The built-in policy: every default, for every agent type the file does not name (no `"*"` policy). */
export const DEFAULT_POLICY: ResolvedPolicy = resolvePolicy(
  { name: BUILT_IN_POLICY_NAME, agent_type: '*' },
  [],
);

/** The wire form of a policy. */
export function policyView(p: ResolvedPolicy): PolicyView {
  return { ...p, recoveryActions: p.recoveryActions.map((r) => ({ ...r }) as JsonObject) };
}

function orDefault<T>(value: T | undefined, fallback: T): T {
  return value === undefined ? fallback : value;
}
