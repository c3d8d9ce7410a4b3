/**
 * Issue 3, test 6: two coordinators forced to act on the same expired lease — one transition, one
 * history entry. Two Store instances (two connection pools, as two coordinator processes have) on one
 * PostgreSQL schema, with the database's clock, race `expireLease` on the same leases many times over.
 */
import type { Timing } from '@rouse/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../packages/server/src/store/postgres/postgres-store.js';
import type { NewTask, Store } from '../../packages/server/src/store/store.js';
import { newTask } from '../../packages/server/src/test-support/store-contract/harness.js';
import { type FreshSchema, freshSchema } from '../harness/postgres.js';
import { waitFor } from '../harness/wait.js';

// Leases of 1 s: long enough that the early expireLease calls land before them on a loaded machine
// (150 ms did not), short enough to keep the test quick.
const TIMING: Timing = {
  heartbeatIntervalMs: 300,
  heartbeatTimeoutMs: 1000,
  claimTimeoutMs: 1000,
  executionTimeoutMs: null,
  attemptDeadlineMs: null,
  stallTimeoutMs: 300_000,
};
const BACKOFF = { baseMs: 1000, capMs: 300_000, jitter: 0 };

let pg: FreshSchema;
let a: Store;
let b: Store;
beforeAll(async () => {
  pg = await freshSchema('expiry');
  a = await createPostgresStore({ connectionString: pg.connectionString, schema: pg.schema, poolSize: 8 });
  b = await createPostgresStore({ connectionString: pg.connectionString, schema: pg.schema, poolSize: 8 });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await pg?.drop();
});

const raceTask = (i: number): NewTask =>
  newTask(`tsk_race_${i.toString().padStart(4, '0')}`, {
    type: 'expiry-race',
    payload: { i },
    timing: TIMING,
  });

describe('two coordinators, one expired lease', () => {
  it('racing expireLease: exactly one transition and one history entry per lease', async () => {
    const n = 100;
    await a.createTasks(Array.from({ length: n }, (_, i) => raceTask(i)));
    const claimed = await b.claimTasks({
      agentId: 'agt_dead',
      types: ['expiry-race'],
      max: n,
      start: true,
      backoff: BACKOFF,
    });
    expect(claimed).toHaveLength(n);
    const now0 = await a.now();
    const due = Math.max(...claimed.map((c) => c.task.leaseExpiresAt ?? 0));
    // Before the lease passes, by the database's clock, neither store may expire anything.
    const early = await Promise.all(
      claimed
        .slice(0, 10)
        .map((c) => a.expireLease({ taskId: c.task.id, version: c.task.version, backoff: BACKOFF })),
    );
    expect(early.every((r) => r === null)).toBe(true);
    await waitFor(async () => (await a.now()) > due, { what: 'the leases to pass', timeoutMs: 5000 });
    expect(due - now0).toBeLessThan(5000);

    // Each store acts three times on every lease, all at once.
    const attempts = claimed.flatMap((c) =>
      [a, b, a, b, a, b].map((s) => ({
        taskId: c.task.id,
        p: s.expireLease({ taskId: c.task.id, version: c.task.version, backoff: BACKOFF }),
      })),
    );
    const results = await Promise.all(attempts.map(async ({ taskId, p }) => ({ taskId, r: await p })));
    const wins = new Map<string, number>();
    for (const { taskId, r } of results) if (r !== null) wins.set(taskId, (wins.get(taskId) ?? 0) + 1);
    expect(wins.size).toBe(n);
    expect([...wins.values()].every((w) => w === 1)).toBe(true);

    for (const c of claimed) {
      const events = await b.listTaskEvents(c.task.id);
      expect(events.map((e) => e.to)).toEqual(['created', 'claimed', 'running', 'timeout']);
      const task = await a.getTask(c.task.id);
      expect(task).toMatchObject({ status: 'timeout', version: c.task.version });
      expect(task?.nextAttemptAt).not.toBeNull();
    }
  });
});
