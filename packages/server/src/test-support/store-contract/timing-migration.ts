/**
 * The migration that moved a task's timing from one JSON object into columns, checked the same way on
 * each backend: the backend's test brings a database to the schema before it, stores the two tasks
 * below as that schema did (`LEGACY_TIMINGS`, the timing as a JSON object), opens a store on it (which
 * migrates) and runs this check. The tasks keep their timing, and the store uses it: the lease of a
 * claim and the retry of a failure follow each task's own values.
 */
import type { Timing } from '@rouse/protocol';
import { expect } from 'vitest';
import { backoffDelayMs } from '../../core/backoff.js';
import { leaseDeadline } from '../../core/timing.js';
import type { Store } from '../../store/store.js';
import { BACKOFF } from './harness.js';

/** Task id → the timing stored as JSON by the schema before the migration (type `work`, created). */
export const LEGACY_TIMINGS: Record<string, Timing> = {
  // No execution timeout nor attempt deadline (null in the JSON), the coordinator's backoff.
  tsk_legacy_a: {
    heartbeatIntervalMs: 4000,
    heartbeatTimeoutMs: 12_000,
    claimTimeoutMs: 20_000,
    executionTimeoutMs: null,
    attemptDeadlineMs: null,
    stallTimeoutMs: 100_000,
  },
  // Every limit set, and a backoff of its own (its type's).
  tsk_legacy_b: {
    heartbeatIntervalMs: 1000,
    heartbeatTimeoutMs: 3000,
    claimTimeoutMs: 7000,
    executionTimeoutMs: 60_000,
    attemptDeadlineMs: 2500,
    stallTimeoutMs: 9000,
    backoff: { baseMs: 50, capMs: 400, jitter: 0 },
  },
};

export async function checkMigratedTimings(store: Store, now: number): Promise<void> {
  for (const [id, timing] of Object.entries(LEGACY_TIMINGS)) {
    expect((await store.getTask(id))?.timing).toStrictEqual(timing);
  }
  const claimed = await store.claimTasks({
    agentId: 'agt_m',
    types: ['work'],
    max: 2,
    start: true,
    backoff: BACKOFF,
  });
  expect(claimed.map((c) => [c.task.id, c.task.leaseExpiresAt])).toEqual(
    Object.entries(LEGACY_TIMINGS).map(([id, timing]) => [id, leaseDeadline('start', now, timing, now)]),
  );
  for (const { task } of claimed) expect(task.timing).toStrictEqual(LEGACY_TIMINGS[task.id]);

  const retried = [];
  for (const { task } of claimed) {
    const failed = await store.failTask({
      taskId: task.id,
      version: task.version,
      agentId: 'agt_m',
      error: { code: 'x', message: 'x', retryable: true },
      backoff: BACKOFF,
    });
    retried.push([failed.task.id, failed.task.nextAttemptAt]);
  }
  // tsk_legacy_b waits out its own backoff, tsk_legacy_a the coordinator's.
  expect(retried).toEqual([
    ['tsk_legacy_a', now + backoffDelayMs(1, BACKOFF)],
    ['tsk_legacy_b', now + backoffDelayMs(1, LEGACY_TIMINGS.tsk_legacy_b!.backoff!)],
  ]);
}
