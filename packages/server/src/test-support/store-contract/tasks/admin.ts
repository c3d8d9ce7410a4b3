/** Contract: cancel, manual retry and graceful agent leave. */

import type { TaskError } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import { BACKOFF, expectCode, GRACE_MS, type Harness, T0, writer } from '../harness.js';

const RETRYABLE: TaskError = { code: 'flaky', message: 'x', retryable: true };

export function adminContract(h: () => Harness): void {
  describe('cancel, retry, release', () => {
    it('cancels any non-final task and records who and why', async () => {
      const { store } = h();
      const created = await h().create({ type: 'c1' });
      const claimed = await h().held(false);
      const running = await h().running();
      const retrying = await h().running();
      await store.failTask({ ...writer(retrying), error: RETRYABLE, backoff: BACKOFF });
      for (const [task, from] of [
        [created, 'created'],
        [claimed, 'claimed'],
        [running, 'running'],
        [retrying, 'failed'],
      ] as const) {
        const out = await store.cancelTask({ taskId: task.id, reason: 'no longer needed', actor: 'admin' });
        expect(out.task).toMatchObject({
          status: 'cancelled',
          final: true,
          leaseExpiresAt: null,
          nextAttemptAt: null,
          finishedAt: T0,
        });
        expect(out.events).toEqual([
          expect.objectContaining({
            from,
            to: 'cancelled',
            actor: 'admin',
            reason: 'no longer needed',
            version: task.version,
          }),
        ]);
      }
      expect(await store.activeLeases()).toEqual([]);
      expect(await h().claim('agt_b', ['c1', retrying.type], 10)).toEqual([]);
    });

    it('refuses to cancel a final task', async () => {
      const { store } = h();
      const done = await h().running();
      await store.completeTasks([writer(done)]);
      await expectCode(
        store.cancelTask({ taskId: done.id, reason: 'r', actor: 'admin' }),
        'invalid_transition',
      );
      const exhausted = await h().running({ maxAttempts: 1 });
      await store.failTask({ ...writer(exhausted), error: RETRYABLE, backoff: BACKOFF });
      await expectCode(
        store.cancelTask({ taskId: exhausted.id, reason: 'r', actor: 'admin' }),
        'invalid_transition',
      );
      const cancelled = await h().create();
      await store.cancelTask({ taskId: cancelled.id, reason: 'r', actor: 'admin' });
      await expectCode(
        store.cancelTask({ taskId: cancelled.id, reason: 'r', actor: 'admin' }),
        'invalid_transition',
      );
      await expectCode(store.cancelTask({ taskId: 'tsk_nope', reason: 'r', actor: 'admin' }), 'not_found');
      expect((await h().events(cancelled.id)).filter((e) => e.to === 'cancelled')).toHaveLength(1);
    });

    it('tells the holder of a cancelled task through its refused writes', async () => {
      const { store } = h();
      const running = await h().running();
      await store.cancelTask({ taskId: running.id, reason: 'stop', actor: 'admin' });
      const [beat] = await store.recordHeartbeats([{ ...writer(running), writeBackGraceMs: GRACE_MS }]);
      expect(beat).toMatchObject({ ok: false, code: 'invalid_transition', details: { from: 'cancelled' } });
      const [complete] = await store.completeTasks([writer(running)]);
      expect(complete).toMatchObject({ ok: false, code: 'invalid_transition' });
      expect((await h().get(running.id)).status).toBe('cancelled');
    });

    it('retries a final failed task now, growing maxAttempts when exhausted', async () => {
      const { store, clock } = h();
      const running = await h().running({ maxAttempts: 1 });
      await store.failTask({
        ...writer(running),
        error: { ...RETRYABLE, retryable: false },
        backoff: BACKOFF,
      });
      clock.advance(5000);
      const retried = await store.retryTask({ taskId: running.id, actor: 'admin' });
      expect(retried.task).toMatchObject({
        status: 'failed',
        nextAttemptAt: T0 + 5000,
        maxAttempts: 2,
        final: false,
        finishedAt: null,
      });
      expect(retried.events).toEqual([
        expect.objectContaining({
          from: 'failed',
          to: 'failed',
          actor: 'admin',
          reason: 'retry_requested',
          version: 1,
        }),
      ]);
      const [again] = await h().claim('agt_b', [running.type]);
      expect(again!.task).toMatchObject({ attempt: 2, version: 2, status: 'claimed' });
    });

    it('retries a final timeout, keeping maxAttempts when the last attempt was not used', async () => {
      const { store } = h();
      const exhausted = await h().running({ maxAttempts: 1 });
      await h().expire(exhausted);
      const retried = await store.retryTask({ taskId: exhausted.id, actor: 'user' });
      expect(retried.task).toMatchObject({ status: 'timeout', maxAttempts: 2, final: false });
      const fatal = await h().running({ maxAttempts: 5 });
      await store.failTask({ ...writer(fatal), error: { ...RETRYABLE, retryable: false }, backoff: BACKOFF });
      expect((await store.retryTask({ taskId: fatal.id, actor: 'user' })).task.maxAttempts).toBe(5);
    });

    it('refuses to retry anything but a final failed or timeout task', async () => {
      const { store } = h();
      const created = await h().create();
      await expectCode(store.retryTask({ taskId: created.id, actor: 'admin' }), 'invalid_transition');
      const running = await h().running();
      await expectCode(store.retryTask({ taskId: running.id, actor: 'admin' }), 'invalid_transition');
      await store.failTask({ ...writer(running), error: RETRYABLE, backoff: BACKOFF });
      // Already scheduled: not final.
      await expectCode(store.retryTask({ taskId: running.id, actor: 'admin' }), 'invalid_transition');
      const done = await h().running();
      await store.completeTasks([writer(done)]);
      await expectCode(store.retryTask({ taskId: done.id, actor: 'admin' }), 'invalid_transition');
      await expectCode(store.retryTask({ taskId: 'tsk_nope', actor: 'admin' }), 'not_found');
    });

    it('releases what a leaving agent holds: timeout now, retried without backoff', async () => {
      const { store } = h();
      const claimed = await h().held(false, {}, 'agt_leaving');
      const running = await h().running({}, 'agt_leaving');
      const last = await h().running({ maxAttempts: 1 }, 'agt_leaving');
      const others = await h().running({}, 'agt_staying');
      const released = await store.releaseAgentTasks({ agentId: 'agt_leaving', reason: 'agent_left' });
      expect(released.map((r) => r.task.id).sort()).toEqual([claimed.id, running.id, last.id].sort());
      for (const r of released) {
        expect(r.task.status).toBe('timeout');
        expect(r.events[0]).toMatchObject({
          to: 'timeout',
          reason: 'agent_left',
          actor: 'agent:agt_leaving',
        });
      }
      const byId = new Map(released.map((r) => [r.task.id, r.task]));
      expect(byId.get(claimed.id)).toMatchObject({ nextAttemptAt: T0, final: false });
      expect(byId.get(last.id)).toMatchObject({ nextAttemptAt: null, final: true });
      expect((await h().get(others.id)).status).toBe('running');
      expect(
        (await h().claim('agt_b', [claimed.type, running.type, last.type], 5)).map((c) => c.task.id).sort(),
      ).toEqual([claimed.id, running.id].sort());
      expect(await store.releaseAgentTasks({ agentId: 'agt_leaving', reason: 'agent_left' })).toEqual([]);
    });
  });

  it('releases one held task at its version only (a reassignment), by the given actor', async () => {
    const { store } = h();
    const target = await h().running({}, 'agt_asleep');
    const kept = await h().running({}, 'agt_asleep');
    // A stale version changes nothing.
    expect(
      await store.releaseAgentTasks({
        agentId: 'agt_asleep',
        reason: 'agent_reassigned',
        task: { id: target.id, version: target.version - 1 },
      }),
    ).toEqual([]);
    // Nor another agent's task.
    expect(
      await store.releaseAgentTasks({
        agentId: 'agt_other',
        reason: 'agent_reassigned',
        task: { id: target.id, version: target.version },
      }),
    ).toEqual([]);
    const [released, ...more] = await store.releaseAgentTasks({
      agentId: 'agt_asleep',
      reason: 'agent_reassigned',
      task: { id: target.id, version: target.version },
      actor: 'coordinator:c1',
    });
    expect(more).toEqual([]);
    expect(released?.task).toMatchObject({
      id: target.id,
      status: 'timeout',
      nextAttemptAt: T0,
      error: { code: 'agent_reassigned', retryable: true },
    });
    expect(released?.events[0]).toMatchObject({ to: 'timeout', actor: 'coordinator:c1' });
    expect((await h().get(kept.id)).status).toBe('running');
    // The stale holder's late write is refused: the task is no longer running.
    expect((await store.completeTasks([writer(target)]))[0]).toMatchObject({
      ok: false,
      code: 'invalid_transition',
    });
  });
}
