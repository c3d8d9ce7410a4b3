/**
 * Timing resolution (docs/design.md §4): policy defaults, per-task overrides, and derivation from an
 * expected duration. Bad values are rejected with an error naming the field and the rule; nothing is
 * silently corrected.
 */
import type { Timing, TimingInput } from '@rouse/protocol';
import { ValidationError } from './errors.js';

/** Defaults for one agent type's policy (or the global defaults). Each at least its {@link MIN_TIMING_MS}. */
export interface TimingDefaults {
  /** At least 100. @default 5000 */
  heartbeatIntervalMs: number;
  /** > 1. @default 3 */
  timeoutFactor: number;
  /** At least 100. @default 30000 */
  claimTimeoutMs: number;
  /** At least 100. @default null (no limit) */
  executionTimeoutMs: number | null;
  /** At least 1000. @default 300000 */
  stallTimeoutMs: number;
}

export const DEFAULT_TIMING: Readonly<TimingDefaults> = {
  heartbeatIntervalMs: 5000,
  timeoutFactor: 3,
  claimTimeoutMs: 30_000,
  executionTimeoutMs: null,
  stallTimeoutMs: 300_000,
};

/** The coordinator's hard limit is this multiple of the agent's own execution timeout. */
export const ATTEMPT_DEADLINE_FACTOR = 1.5;
/** With `expectedDurationMs`, the execution timeout is this multiple of `max`. */
export const EXECUTION_TIMEOUT_FACTOR = 1.5;
export const MIN_DERIVED_INTERVAL_MS = 1000;

/**
 * The least each timing value may be, in milliseconds. Below these a value is certainly a mistake (a
 * number of seconds read as milliseconds), not a tight setting: every agent would time out at once.
 */
export const MIN_TIMING_MS = {
  heartbeatIntervalMs: 100,
  heartbeatTimeoutMs: 100,
  claimTimeoutMs: 100,
  executionTimeoutMs: 100,
  attemptDeadlineMs: 100,
  stallTimeoutMs: 1000,
} as const;
export const MAX_DERIVED_INTERVAL_MS = 60_000;

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

export function resolveTiming(input: TimingInput = {}, defaults: TimingDefaults = DEFAULT_TIMING): Timing {
  for (const field of Object.keys(MIN_TIMING_MS) as (keyof typeof MIN_TIMING_MS)[])
    checkTimingMs(`timing.${field}`, input[field], MIN_TIMING_MS[field]);
  if (
    input.timeoutFactor !== undefined &&
    !(Number.isFinite(input.timeoutFactor) && input.timeoutFactor >= 1)
  ) {
    throw new ValidationError('timing.timeoutFactor', 'must be a number >= 1');
  }

  const factor = input.timeoutFactor ?? defaults.timeoutFactor;
  let interval = defaults.heartbeatIntervalMs;
  let execution = defaults.executionTimeoutMs;

  const expected = input.expectedDurationMs;
  if (expected) {
    if (!Number.isInteger(expected.min) || expected.min < 0) {
      throw new ValidationError('timing.expectedDurationMs.min', 'must be an integer >= 0');
    }
    if (!Number.isInteger(expected.max) || expected.max < 1) {
      throw new ValidationError('timing.expectedDurationMs.max', 'must be an integer >= 1');
    }
    if (expected.max < expected.min) {
      throw new ValidationError('timing.expectedDurationMs.max', 'must be >= timing.expectedDurationMs.min');
    }
    interval = Math.round(clamp(expected.min / 10, MIN_DERIVED_INTERVAL_MS, MAX_DERIVED_INTERVAL_MS));
    execution = Math.round(EXECUTION_TIMEOUT_FACTOR * expected.max);
    if (input.executionTimeoutMs === undefined && execution < MIN_TIMING_MS.executionTimeoutMs) {
      const least = Math.ceil(MIN_TIMING_MS.executionTimeoutMs / EXECUTION_TIMEOUT_FACTOR);
      throw new ValidationError(
        'timing.expectedDurationMs.max',
        `must be >= ${least} (milliseconds): the execution timeout derived from it (${EXECUTION_TIMEOUT_FACTOR} × max) must be >= ${MIN_TIMING_MS.executionTimeoutMs}`,
      );
    }
  }

  interval = input.heartbeatIntervalMs ?? interval;
  execution = input.executionTimeoutMs ?? execution;
  const heartbeatTimeoutMs = input.heartbeatTimeoutMs ?? Math.round(factor * interval);
  if (heartbeatTimeoutMs <= interval) {
    throw new ValidationError(
      'timing.heartbeatTimeoutMs',
      `must exceed timing.heartbeatIntervalMs (${heartbeatTimeoutMs} <= ${interval}); one late heartbeat must not kill a task`,
    );
  }
  const attemptDeadlineMs =
    input.attemptDeadlineMs ?? (execution === null ? null : Math.round(ATTEMPT_DEADLINE_FACTOR * execution));
  if (attemptDeadlineMs !== null && execution !== null && attemptDeadlineMs <= execution) {
    throw new ValidationError(
      'timing.attemptDeadlineMs',
      `must exceed timing.executionTimeoutMs (${attemptDeadlineMs} <= ${execution}) so an agent can report its own timeout first`,
    );
  }
  return {
    heartbeatIntervalMs: interval,
    heartbeatTimeoutMs,
    claimTimeoutMs: input.claimTimeoutMs ?? defaults.claimTimeoutMs,
    executionTimeoutMs: execution,
    attemptDeadlineMs,
    stallTimeoutMs: input.stallTimeoutMs ?? defaults.stallTimeoutMs,
  };
}

/** A timing value in milliseconds: an integer, at least `min` (see {@link MIN_TIMING_MS}). */
export function checkTimingMs(field: string, v: number | undefined, min: number): void {
  if (v === undefined) return;
  if (!Number.isInteger(v) || v < min)
    throw new ValidationError(field, `must be an integer >= ${min} (milliseconds)`);
}

/**
 * The lease deadline after an accepted event, never beyond the attempt deadline:
 * claim → claimTimeoutMs; start and heartbeat → heartbeatTimeoutMs.
 */
export function leaseDeadline(
  kind: 'claim' | 'start' | 'heartbeat',
  now: number,
  timing: Timing,
  startedAt: number | null,
): number {
  const lease = now + (kind === 'claim' ? timing.claimTimeoutMs : timing.heartbeatTimeoutMs);
  if (kind === 'claim' || timing.attemptDeadlineMs === null) return lease;
  const deadline = (startedAt ?? now) + timing.attemptDeadlineMs;
  return Math.min(lease, deadline);
}
