/**
 * A whole `Task` for unit tests: a fresh `created` task of type `codex`, 10 s old at `now`, nobody
 * holding it, with `over` applied (built on the SDK's `mockTask`, the one complete task literal).
 */
import type { Task } from '@rouse/protocol';
import { mockTask } from '@rouse/sdk/testing';

export function taskFixture(now: number, over: Partial<Task> = {}): Task {
  return mockTask({
    id: 'tsk_1',
    type: 'codex',
    status: 'created',
    attempt: 0,
    version: 0,
    agentId: null,
    createdAt: now - 10_000,
    runAt: now - 10_000,
    claimedAt: null,
    startedAt: null,
    progressChangedAt: null,
    leaseExpiresAt: null,
    ...over,
  });
}
