/** Contract: creating tasks (idempotency, all-or-nothing batches) and reading them back. */

import type { Task, TaskStatus } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import { BACKOFF, expectCode, type Harness, T0, TIMING, uniqueId } from '../harness.js';

export function createAndReadContract(h: () => Harness): void {
  describe('createTasks and reads', () => {
    it('creates a task in created with defaults filled by the store', async () => {
      const { store } = h();
      const input = h().newTask({
        labels: { repo: 'a/b' },
        requires: ['openai'],
        resumable: true,
        priority: 3,
      });
      const [created] = await store.createTasks([input]);
      expect(created!.deduplicated).toBe(false);
      const task = created!.task;
      expect(task).toMatchObject({
        id: input.id,
        type: 'work',
        status: 'created',
        payload: { n: 1 },
        attempt: 0,
        version: 0,
        maxAttempts: 4,
        agentId: null,
        priority: 3,
        resumable: true,
        requires: ['openai'],
        labels: { repo: 'a/b' },
        timing: TIMING,
        createdAt: T0,
        runAt: T0,
        leaseExpiresAt: null,
        nextAttemptAt: null,
        finishedAt: null,
        final: false,
      });
      expect(await store.getTask(input.id)).toEqual(task);
    });

    it('keeps an explicit runAt and any JSON payload', async () => {
      const payload = { nested: { list: [1, 'two', null, true], empty: {} }, unicode: 'héllo ✓' };
      const task = await h().create({ runAt: T0 + 5000, payload });
      expect(task.runAt).toBe(T0 + 5000);
      expect((await h().get(task.id)).payload).toEqual(payload);
      const nullPayload = await h().create({ payload: null });
      expect((await h().get(nullPayload.id)).payload).toBeNull();
    });

    it('records creation as the first history entry', async () => {
      const task = await h().create();
      const events = await h().events(task.id);
      expect(events).toEqual([
        {
          seq: 1,
          at: T0,
          from: null,
          to: 'created',
          version: 0,
          attempt: 0,
          actor: 'user',
          reason: 'created',
          details: null,
        },
      ]);
    });

    it('returns null for an unknown task and an empty history', async () => {
      expect(await h().store.getTask('tsk_missing')).toBeNull();
      expect(await h().store.listTaskEvents('tsk_missing')).toEqual([]);
    });

    it('deduplicates the same idempotency key, type and payload (key order ignored)', async () => {
      const { store } = h();
      const first = await h().create({ idempotencyKey: 'pr-42', payload: { a: 1, b: { c: 2, d: 3 } } });
      const [again] = await store.createTasks([
        h().newTask({ idempotencyKey: 'pr-42', payload: { b: { d: 3, c: 2 }, a: 1 } }),
      ]);
      expect(again!.deduplicated).toBe(true);
      expect(again!.task.id).toBe(first.id);
      expect((await store.listTasks({})).tasks).toHaveLength(1);
      expect(await h().events(first.id)).toHaveLength(1);
    });

    it('returns the existing task as it is now, not as it was created', async () => {
      const task = await h().create({ idempotencyKey: 'k', type: 'solo' });
      await h().claim('agt_a', ['solo']);
      const [again] = await h().store.createTasks([h().newTask({ idempotencyKey: 'k', type: 'solo' })]);
      expect(again).toMatchObject({
        deduplicated: true,
        task: { id: task.id, status: 'claimed', version: 1 },
      });
    });

    it('refuses the same key with a different payload or type (idempotency_conflict)', async () => {
      const first = await h().create({ idempotencyKey: 'k1', payload: { a: 1 } });
      const err = await expectCode(
        h().store.createTasks([h().newTask({ idempotencyKey: 'k1', payload: { a: 2 } })]),
        'idempotency_conflict',
      );
      expect(err.details).toMatchObject({ idempotencyKey: 'k1', taskId: first.id });
      await expectCode(
        h().store.createTasks([h().newTask({ idempotencyKey: 'k1', type: 'other' })]),
        'idempotency_conflict',
      );
      expect((await h().store.listTasks({})).tasks).toHaveLength(1);
    });

    it('creates a batch all or nothing', async () => {
      const { store } = h();
      await h().create({ idempotencyKey: 'taken', payload: 1 });
      const batch = [
        h().newTask(),
        h().newTask(),
        h().newTask({ idempotencyKey: 'taken', payload: 2 }),
        h().newTask(),
      ];
      await expectCode(store.createTasks(batch), 'idempotency_conflict');
      for (const t of batch) expect(await store.getTask(t.id)).toBeNull();
      expect((await store.listTasks({})).tasks).toHaveLength(1);

      const dup = h().newTask();
      await expectCode(store.createTasks([h().newTask(), dup, { ...dup, payload: 'x' }]), 'conflict');
      expect((await store.listTasks({})).tasks).toHaveLength(1);

      // Past the rows a store writes in one statement: the failing row is in a later statement.
      const many = Array.from({ length: 300 }, () => h().newTask());
      await expectCode(store.createTasks([...many, { ...many[0]!, payload: 'x' }]), 'conflict');
      for (const i of [0, 63, 64, 249, 250, 299]) expect(await store.getTask(many[i]!.id)).toBeNull();
      expect((await store.listTasks({})).tasks).toHaveLength(1);
    });

    it('deduplicates inside one batch and returns results in input order', async () => {
      const a = h().newTask({ idempotencyKey: 'same' });
      const b = h().newTask({ idempotencyKey: 'same' });
      const c = h().newTask();
      const out = await h().store.createTasks([a, b, c]);
      expect(out.map((o) => [o.task.id, o.deduplicated])).toEqual([
        [a.id, false],
        [a.id, true],
        [c.id, false],
      ]);
    });

    it('creates a large batch whole: every task with its history, in input order, keys kept across it', async () => {
      const { store } = h();
      // Past the rows a store may write in one statement, with keys repeated across that size.
      const batch = Array.from({ length: 300 }, (_, i) => h().newTask({ payload: { i } }));
      batch[7] = h().newTask({ payload: { i: 7 }, idempotencyKey: 'seven' });
      batch[70] = h().newTask({ payload: { i: 7 }, idempotencyKey: 'seven' });
      batch[260] = h().newTask({ payload: { i: 260 }, idempotencyKey: 'late' });
      const again = h().newTask({ payload: { i: 260 }, idempotencyKey: 'late' });
      const out = await store.createTasks([...batch, again]);
      expect(out.map((o) => o.task.id)).toEqual([
        ...batch.map((t, i) => (i === 70 ? batch[7]!.id : t.id)),
        batch[260]!.id,
      ]);
      expect(out.filter((o) => o.deduplicated)).toHaveLength(2);
      const created = batch.filter((_, i) => i !== 70).map((t) => t.id);
      const listed = (await store.listTasks({ limit: 300 })).tasks;
      expect(listed.map((t) => t.id).reverse()).toEqual(created);
      for (const i of [0, 63, 64, 65, 127, 128, 249, 250, 251, 299]) {
        expect(await store.getTask(batch[i]!.id)).toMatchObject({ status: 'created', payload: { i } });
        expect((await store.listTaskEvents(batch[i]!.id)).map((e) => e.to)).toEqual(['created']);
      }
    });

    it('lists newest first with filters and an opaque cursor that visits each task once', async () => {
      const { store } = h();
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) {
        ids.push(
          (await h().create({ type: i % 2 === 0 ? 'even' : 'odd', labels: { i: String(i), all: 'yes' } })).id,
        );
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: { tasks: { id: string }[]; nextCursor: string | null } = await store.listTasks({
          limit: 3,
          cursor,
        });
        seen.push(...page.tasks.map((t) => t.id));
        cursor = page.nextCursor;
        pages += 1;
      } while (cursor !== null);
      expect(pages).toBe(3);
      expect(seen).toEqual([...ids].reverse());

      expect((await store.listTasks({ type: 'even' })).tasks.map((t) => t.id)).toEqual([
        ids[6],
        ids[4],
        ids[2],
        ids[0],
      ]);
      expect((await store.listTasks({ labels: { i: '3', all: 'yes' } })).tasks.map((t) => t.id)).toEqual([
        ids[3],
      ]);
      expect((await store.listTasks({ labels: { i: '3', all: 'no' } })).tasks).toEqual([]);

      await h().claim('agt_x', ['odd'], 2);
      const claimed = await store.listTasks({ statuses: ['claimed'] });
      expect(claimed.tasks.map((t) => t.id)).toEqual([ids[3], ids[1]]);
      expect((await store.listTasks({ agentId: 'agt_x', type: 'odd' })).tasks).toHaveLength(2);
      expect((await store.listTasks({ statuses: ['created', 'claimed'] })).tasks).toHaveLength(7);
      expect((await store.listTasks({ limit: 7 })).nextCursor).toBeNull();
    });

    it('lists by several statuses newest first, page by page, completed ones included', async () => {
      const { store } = h();
      const labels = { group: uniqueId('grp') };
      const plan = [
        'completed',
        'created',
        'running',
        'completed',
        'failed',
        'created',
        'completed',
      ] as const;
      const made: { id: string; status: string }[] = [];
      for (const status of plan) {
        if (status === 'created') {
          made.push({ id: (await h().create({ labels })).id, status });
          continue;
        }
        const task = await h().running({ labels });
        if (status === 'completed') {
          const [done] = await store.completeTasks([
            { taskId: task.id, agentId: 'agt_a', version: task.version },
          ]);
          expect(done!.ok).toBe(true);
        } else if (status === 'failed') {
          await store.failTask({
            taskId: task.id,
            agentId: 'agt_a',
            version: task.version,
            error: { code: 'boom', message: 'boom', retryable: false },
            backoff: BACKOFF,
          });
        }
        made.push({ id: task.id, status });
      }
      const newestFirst = [...made].reverse();
      const listAll = async (statuses: string[], limit: number): Promise<string[]> => {
        const ids: string[] = [];
        let cursor: string | null = null;
        do {
          const page: { tasks: Task[]; nextCursor: string | null } = await store.listTasks({
            statuses: statuses as TaskStatus[],
            labels,
            limit,
            cursor,
          });
          for (const t of page.tasks) expect(statuses).toContain(t.status);
          ids.push(...page.tasks.map((t) => t.id));
          cursor = page.nextCursor;
        } while (cursor !== null);
        return ids;
      };
      const expected = (statuses: string[]) =>
        newestFirst.filter((m) => statuses.includes(m.status)).map((m) => m.id);

      // A status named twice lists its tasks once.
      const several = ['completed', 'created', 'running', 'completed'];
      expect(await listAll(several, 2)).toEqual(expected(several));
      expect(await listAll(several, 100)).toEqual(expected(several));
      expect(await listAll(['completed'], 1)).toEqual(expected(['completed']));
      expect(await listAll(['failed', 'running'], 1)).toEqual(expected(['failed', 'running']));
      expect(await listAll(['cancelled'], 5)).toEqual([]);
      // With a type filter too.
      const runningTask = made.find((m) => m.status === 'running')!;
      const type = (await h().get(runningTask.id)).type;
      expect(
        (await store.listTasks({ statuses: ['running', 'created'], type })).tasks.map((t) => t.id),
      ).toEqual([runningTask.id]);
    });

    it('rejects a cursor it did not issue and a bad limit', async () => {
      await expectCode(h().store.listTasks({ cursor: 'not-a-cursor' }), 'validation_failed');
      await expectCode(h().store.listTasks({ limit: 0 }), 'validation_failed');
    });

    it('computes final from status and nextAttemptAt on every read', async () => {
      const running = await h().running({ maxAttempts: 1 });
      const failed = await h().store.failTask({
        taskId: running.id,
        agentId: 'agt_a',
        version: running.version,
        error: { code: 'boom', message: 'boom', retryable: true },
        backoff: BACKOFF,
      });
      expect(failed.task).toMatchObject({ status: 'failed', nextAttemptAt: null, final: true });
      expect((await h().get(running.id)).final).toBe(true);
      expect((await h().store.listTasks({ type: running.type })).tasks[0]!.final).toBe(true);
    });
  });
}
