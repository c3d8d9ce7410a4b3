/** Timing options the Worker and the Monitor share: checked alike, and the heartbeat request timeout. */
import { InvalidOptionError } from '../errors.js';

/** The heartbeat request timeout: `heartbeatTimeoutMs`, else the interval within [1 s, 5 s] (never above requestTimeoutMs). */
export function heartbeatTimeoutFor(
  o: { heartbeatTimeoutMs: number | undefined; requestTimeoutMs: number },
  intervalMs: number,
): number {
  if (o.heartbeatTimeoutMs !== undefined) return o.heartbeatTimeoutMs;
  return Math.min(o.requestTimeoutMs, Math.max(1000, Math.min(5000, intervalMs)));
}

/** Check the options the Worker and the Monitor share; names the option and the rule. */
export function checkTimings(o: {
  heartbeatIntervalMs?: number | undefined;
  heartbeatTimeoutMs?: number | undefined;
  startTimeoutMs?: number | undefined;
}): void {
  if (
    o.heartbeatIntervalMs !== undefined &&
    (!Number.isInteger(o.heartbeatIntervalMs) || o.heartbeatIntervalMs < 10)
  ) {
    throw new InvalidOptionError('heartbeatIntervalMs', 'must be an integer >= 10', o.heartbeatIntervalMs);
  }
  if (
    o.heartbeatTimeoutMs !== undefined &&
    (!Number.isInteger(o.heartbeatTimeoutMs) || o.heartbeatTimeoutMs < 100)
  ) {
    throw new InvalidOptionError('heartbeatTimeoutMs', 'must be an integer >= 100', o.heartbeatTimeoutMs);
  }
  if (o.startTimeoutMs !== undefined && (!Number.isInteger(o.startTimeoutMs) || o.startTimeoutMs < 0)) {
    throw new InvalidOptionError(
      'startTimeoutMs',
      'must be an integer >= 0 (0: do not wait)',
      o.startTimeoutMs,
    );
  }
}

/**
 * The time limit of the goodbye (`DELETE /v1/agents/{id}`) when stopping: a few seconds, so that a
 * process stopping while its coordinator is away is not held up; unanswered, the agent goes `lost`.
 */
export function leaveTimeoutMs(o: { requestTimeoutMs: number }): number {
  return Math.min(o.requestTimeoutMs, 5000);
}
