/** Contract: claims — fields set, order, schedule, dependencies, exactly-once under concurrency. */
import { describe, expect, it } from 'vitest';
import { BACKOFF, GRACE_MS, type Harness, NO_BACKOFF, T0, TIMING, writer } from '../harness.js';

export function claimsContract(h: () => Harness): void {
  describe('claimTasks', () => {
    it('claims: version and attempt grow, agent and claim lease set, one history entry', async () => {
      const task = await h().create();
      h().clock.advance(10);
      const [c] = await h().claim('agt_a', ['work']);
      expect(c!.task).toMatchObject({
        id: task.id,
        status: 'claimed',
        version: 1,
        attempt: 1,
        agentId: 'agt_a',
        claimedAt: T0 + 10,
        startedAt: null,
        leaseExpiresAt: T0 + 10 + TIMING.claimTimeoutMs,
        final: false,
      });
      expect(c!.events).toEqual([
        expect.objectContaining({
          from: 'created',
          to: 'claimed',
          version: 1,
          attempt: 1,
          actor: 'agent:agt_a',
          at: T0 + 10,
        }),
      ]);
      expect(await h().events(task.id)).toEqual([expect.objectContaining({ to: 'created' }), c!.events[0]]);
      expect(await h().get(task.id)).toEqual(c!.task);
    });

    it('claims with start: running at once with a heartbeat lease and two history entries', async () => {
      const task = await h().create({
        timing: { ...TIMING, attemptDeadlineMs: 10_000, executionTimeoutMs: 5000 },
      });
      const [c] = await h().claim('agt_a', ['work'], 1, true);
      expect(c!.task).toMatchObject({
        id: task.id,
        status: 'running',
        version: 1,
        attempt: 1,
        startedAt: T0,
      });
      // The heartbeat lease (15 s) is capped by the attempt deadline (10 s).
      expect(c!.task.leaseExpiresAt).toBe(T0 + 10_000);
      expect(c!.events.map((e) => [e.from, e.to, e.version])).toEqual([
        ['created', 'claimed', 1],
        ['claimed', 'running', 1],
      ]);
    });

    it('takes the highest priority first, then the oldest, up to max, across types', async () => {
      const low = await h().create({ type: 'a', priority: 0 });
      const high = await h().create({ type: 'b', priority: 5 });
      const low2 = await h().create({ type: 'a', priority: 0 });
      const mid = await h().create({ type: 'b', priority: 1 });
      await h().create({ type: 'c', priority: 100 });
      const claimed = await h().claim('agt_a', ['a', 'b'], 3);
      expect(claimed.map((c) => c.task.id)).toEqual([high.id, mid.id, low.id]);
      const rest = await h().claim('agt_a', ['a', 'b'], 10);
      expect(rest.map((c) => c.task.id)).toEqual([low2.id]);
      expect(await h().claim('agt_a', ['a', 'b'], 10)).toEqual([]);
      expect(await h().claim('agt_a', [], 10)).toEqual([]);
      expect(await h().claim('agt_a', ['c'], 0)).toEqual([]);
    });

    it('orders one type by priority, then age', async () => {
      const a = await h().create({ priority: 1 });
      const b = await h().create({ priority: 7 });
      const c = await h().create({ priority: -3 });
      const d = await h().create({ priority: 7 });
      const e = await h().create({ priority: 1 });
      const order: string[] = [];
      for (let i = 0; i < 5; i++)
        order.push(...(await h().claim('agt_a', ['work'], 1)).map((x) => x.task.id));
      expect(order).toEqual([b.id, d.id, a.id, e.id, c.id]);
    });

    it('is not blocked by scheduled tasks ordered before claimable ones', async () => {
      for (let i = 0; i < 3; i++) await h().create({ priority: 9, runAt: T0 + 60_000 });
      const ready = await h().create({ priority: 0 });
      expect((await h().claim('agt_a', ['work'], 1)).map((c) => c.task.id)).toEqual([ready.id]);
    });

    it('waits for runAt', async () => {
      const task = await h().create({ runAt: T0 + 5000 });
      expect(await h().claim('agt_a', ['work'])).toEqual([]);
      h().clock.advance(4999);
      expect(await h().claim('agt_a', ['work'])).toEqual([]);
      h().clock.advance(1);
      expect((await h().claim('agt_a', ['work'])).map((c) => c.task.id)).toEqual([task.id]);
    });

    it('waits for nextAttemptAt after a failure, then claims the next attempt', async () => {
      const running = await h().running();
      const failed = await h().store.failTask({
        ...writer(running),
        error: { code: 'x', message: 'x', retryable: true },
        backoff: BACKOFF,
      });
      expect(failed.task.nextAttemptAt).toBe(T0 + 1000);
      expect(await h().claim('agt_b', [running.type])).toEqual([]);
      h().clock.advance(1000);
      const [again] = await h().claim('agt_b', [running.type]);
      expect(again!.task).toMatchObject({
        status: 'claimed',
        attempt: 2,
        version: 2,
        agentId: 'agt_b',
        nextAttemptAt: null,
      });
      expect(again!.events[0]).toMatchObject({ from: 'failed', to: 'claimed' });
      expect(await h().get(running.id)).toEqual(again!.task);
    });

    it('returns the claimed task as stored, also for a resumable task claimed again', async () => {
      const running = await h().running({ resumable: true, labels: { team: 'a' }, requires: ['db'] });
      await h().store.saveCheckpoint({ ...writer(running), state: { step: 3 }, session: { s: 1 } });
      await h().store.recordHeartbeats([
        { ...writer(running), progress: 0.5, phase: 'half', writeBackGraceMs: GRACE_MS },
      ]);
      await h().store.failTask({
        ...writer(running),
        error: { code: 'x', message: 'x', retryable: true },
        backoff: NO_BACKOFF,
      });
      for (const start of [true, false]) {
        const [again] = await h().claim(start ? 'agt_b' : 'agt_c', [running.type], 1, start);
        expect(again!.task).toMatchObject({ checkpoint: { step: 3 }, session: { s: 1 }, error: null });
        expect(await h().get(running.id)).toEqual(again!.task);
        if (start) await h().expire(again!.task, NO_BACKOFF);
      }
    });

    it('never claims a final task', async () => {
      const running = await h().running({ maxAttempts: 1 });
      await h().store.failTask({
        ...writer(running),
        error: { code: 'x', message: 'x', retryable: true },
        backoff: NO_BACKOFF,
      });
      h().clock.advance(86_400_000);
      expect(await h().claim('agt_b', [running.type], 5)).toEqual([]);
    });

    it('skips tasks that require an unavailable dependency', async () => {
      const needsOpenai = await h().create({ requires: ['openai'], priority: 9 });
      const needsBoth = await h().create({ requires: ['db', 'anthropic'], priority: 8 });
      const free = await h().create();
      const claimed = await h().store.claimTasks({
        agentId: 'agt_a',
        types: ['work'],
        max: 5,
        start: false,
        unavailableDependencies: ['openai', 'anthropic'],
        backoff: BACKOFF,
      });
      expect(claimed.map((c) => c.task.id)).toEqual([free.id]);
      const later = await h().claim('agt_a', ['work'], 5);
      expect(later.map((c) => c.task.id)).toEqual([needsOpenai.id, needsBoth.id]);
    });

    it('gives each task to exactly one of many concurrent claims', async () => {
      const { store } = h();
      await store.createTasks(Array.from({ length: 60 }, () => h().newTask({ type: 'race' })));
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.claimTasks({
            agentId: `agt_${i}`,
            types: ['race'],
            max: 5,
            start: i % 2 === 0,
            backoff: BACKOFF,
          }),
        ),
      );
      const ids = results.flat().map((c) => c.task.id);
      expect(ids).toHaveLength(60);
      expect(new Set(ids).size).toBe(60);
      for (const [i, batch] of results.entries()) {
        for (const c of batch) expect(c.task.agentId).toBe(`agt_${i}`);
      }
      const listed = await store.listTasks({ type: 'race', limit: 100 });
      expect(listed.tasks.every((t) => t.version === 1 && t.attempt === 1)).toBe(true);
    });

    it('claims each attempt exactly once when expired tasks are raced for', async () => {
      const { store } = h();
      const created = await store.createTasks(
        Array.from({ length: 10 }, () => h().newTask({ type: 'again' })),
      );
      const first = await h().claim('agt_a', ['again'], 10);
      expect(first).toHaveLength(10);
      h().clock.advance(TIMING.claimTimeoutMs);
      await Promise.all(
        first.map((c) => store.expireLease({ taskId: c.task.id, version: 1, backoff: NO_BACKOFF })),
      );
      const second = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          store.claimTasks({
            agentId: `agt_r${i}`,
            types: ['again'],
            max: 3,
            start: false,
            backoff: BACKOFF,
          }),
        ),
      );
      const ids = second.flat().map((c) => c.task.id);
      expect(new Set(ids)).toEqual(new Set(created.map((c) => c.task.id)));
      expect(ids).toHaveLength(10);
      for (const c of second.flat()) expect(c.task).toMatchObject({ version: 2, attempt: 2 });
    });
  });
}
