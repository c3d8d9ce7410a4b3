/** Contract: lease expiry — conditional, with the retry scheduled in the same write. */
import { describe, expect, it } from 'vitest';
import { BACKOFF, GRACE_MS, type Harness, T0, TIMING, writer } from '../harness.js';

export function expiryContract(h: () => Harness): void {
  describe('expireLease and leases', () => {
    it('does nothing before the lease passes', async () => {
      const running = await h().running();
      h().clock.set(running.leaseExpiresAt! - 1);
      expect(await h().store.expireLease({ taskId: running.id, version: 1, backoff: BACKOFF })).toBeNull();
      expect(await h().get(running.id)).toEqual(running);
      expect(await h().events(running.id)).toHaveLength(3);
    });

    it('times out a silent running task and schedules the retry in the same write', async () => {
      const running = await h().running();
      h().clock.set(running.leaseExpiresAt!);
      const expired = await h().store.expireLease({ taskId: running.id, version: 1, backoff: BACKOFF });
      expect(expired!.reason).toBe('heartbeat_timeout');
      const now = T0 + TIMING.heartbeatTimeoutMs;
      expect(expired!.task).toMatchObject({
        status: 'timeout',
        version: 1,
        leaseExpiresAt: null,
        nextAttemptAt: now + 1000,
        final: false,
        error: { code: 'heartbeat_timeout', retryable: true },
      });
      expect(expired!.events).toEqual([
        expect.objectContaining({
          from: 'running',
          to: 'timeout',
          version: 1,
          actor: 'coordinator',
          reason: 'heartbeat_timeout',
        }),
      ]);
      expect(await h().get(running.id)).toEqual(expired!.task);
    });

    it('is harmless twice, and for a wrong version or unknown task', async () => {
      const { store } = h();
      const running = await h().running();
      await h().expire(running);
      expect(await store.expireLease({ taskId: running.id, version: 1, backoff: BACKOFF })).toBeNull();
      expect(await store.expireLease({ taskId: running.id, version: 0, backoff: BACKOFF })).toBeNull();
      expect(await store.expireLease({ taskId: 'tsk_nope', version: 1, backoff: BACKOFF })).toBeNull();
      expect((await h().events(running.id)).filter((e) => e.to === 'timeout')).toHaveLength(1);
    });

    it('does nothing after a heartbeat renewed the lease', async () => {
      const { store, clock } = h();
      const running = await h().running();
      clock.advance(10_000);
      await store.recordHeartbeats([{ ...writer(running), writeBackGraceMs: GRACE_MS }]);
      clock.set(running.leaseExpiresAt!);
      expect(await store.expireLease({ taskId: running.id, version: 1, backoff: BACKOFF })).toBeNull();
      clock.set(T0 + 10_000 + TIMING.heartbeatTimeoutMs);
      expect((await store.expireLease({ taskId: running.id, version: 1, backoff: BACKOFF }))?.reason).toBe(
        'heartbeat_timeout',
      );
    });

    it('does nothing once the next attempt holds the task', async () => {
      const { store, clock } = h();
      const first = await h().running();
      await h().expire(first);
      clock.advance(1000);
      const second = await h().claimTask(first, 'agt_b', true);
      clock.advance(86_400_000);
      expect(await store.expireLease({ taskId: first.id, version: 1, backoff: BACKOFF })).toBeNull();
      expect(
        (await store.expireLease({ taskId: first.id, version: second.version, backoff: BACKOFF }))?.task
          .attempt,
      ).toBe(2);
    });

    it('times out a claimed task that was never started (claim_timeout)', async () => {
      const claimed = await h().held(false);
      expect(claimed.leaseExpiresAt).toBe(T0 + TIMING.claimTimeoutMs);
      const expired = await h().store.expireLease({ taskId: claimed.id, version: 1, backoff: BACKOFF });
      expect(expired).toBeNull();
      h().clock.set(claimed.leaseExpiresAt!);
      const later = await h().store.expireLease({ taskId: claimed.id, version: 1, backoff: BACKOFF });
      expect(later!.reason).toBe('claim_timeout');
      expect(later!.events[0]).toMatchObject({ from: 'claimed', to: 'timeout', reason: 'claim_timeout' });
      expect(later!.task.error).toMatchObject({ code: 'claim_timeout', retryable: true });
    });

    it('times out a running task at its attempt deadline even while it heartbeats', async () => {
      const { store, clock } = h();
      const timing = { ...TIMING, executionTimeoutMs: 20_000, attemptDeadlineMs: 30_000 };
      const running = await h().running({ timing });
      let lease = running.leaseExpiresAt!;
      while (clock.now() + 10_000 < T0 + 30_000) {
        clock.advance(10_000);
        const [o] = await store.recordHeartbeats([
          { ...writer(running), progress: clock.now(), writeBackGraceMs: GRACE_MS },
        ]);
        lease = o!.ok ? o!.value.leaseExpiresAt : -1;
      }
      expect(lease).toBe(T0 + 30_000);
      clock.set(lease);
      const expired = await store.expireLease({ taskId: running.id, version: 1, backoff: BACKOFF });
      expect(expired!.reason).toBe('attempt_deadline');
      expect(expired!.task.error).toMatchObject({ code: 'attempt_deadline' });
    });

    it('is final when the expired attempt was the last', async () => {
      const running = await h().running({ maxAttempts: 1 });
      const expired = await h().expire(running);
      expect(expired).toMatchObject({
        status: 'timeout',
        nextAttemptAt: null,
        final: true,
        finishedAt: running.leaseExpiresAt,
      });
    });

    it('makes the task claimable again after the backoff', async () => {
      const running = await h().running();
      const expired = await h().expire(running);
      expect(await h().claim('agt_b', [running.type])).toEqual([]);
      h().clock.set(expired.nextAttemptAt!);
      const [again] = await h().claim('agt_b', [running.type]);
      expect(again!.task).toMatchObject({ attempt: 2, version: 2 });
      expect(again!.events[0]).toMatchObject({ from: 'timeout', to: 'claimed' });
    });

    it('grants the write-back grace once per attempt: repeating executionDone does not renew it', async () => {
      const { store, clock } = h();
      const running = await h().running();
      const done = { ...writer(running), executionDone: true, writeBackGraceMs: GRACE_MS };
      const [first] = await store.recordHeartbeats([done]);
      expect(first).toMatchObject({ ok: true, value: { leaseExpiresAt: T0 + GRACE_MS } });
      clock.advance(GRACE_MS / 2);
      const [again] = await store.recordHeartbeats([done]);
      expect(again).toMatchObject({ ok: true, value: { leaseExpiresAt: T0 + GRACE_MS } });
      expect((await store.getTask(running.id))!.leaseExpiresAt).toBe(T0 + GRACE_MS);
    });

    it('lists every held lease, optionally only those due', async () => {
      const { store, clock } = h();
      const claimed = await h().held(false);
      const running = await h().running();
      const done = await h().running();
      await store.completeTasks([writer(done)]);
      await store.recordHeartbeats([{ ...writer(running), executionDone: true, writeBackGraceMs: GRACE_MS }]);
      await store.setResultRef({
        ...writer(running),
        resultRef: { key: 'k', sizeBytes: 1, contentType: 'text/plain', sha256: '0' },
      });
      const leases = await store.activeLeases();
      const byId = new Map(leases.map((l) => [l.taskId, l]));
      expect(byId.size).toBe(2);
      expect(byId.get(claimed.id)).toEqual({
        taskId: claimed.id,
        version: 1,
        status: 'claimed',
        leaseExpiresAt: T0 + TIMING.claimTimeoutMs,
        executionDone: false,
        hasResultRef: false,
        heartbeatTimeoutMs: TIMING.heartbeatTimeoutMs,
      });
      expect(byId.get(running.id)).toMatchObject({
        status: 'running',
        leaseExpiresAt: T0 + GRACE_MS,
        executionDone: true,
        hasResultRef: true,
      });
      expect((await store.activeLeases({ dueBy: T0 + TIMING.claimTimeoutMs })).map((l) => l.taskId)).toEqual([
        claimed.id,
      ]);
      expect(await store.activeLeases({ dueBy: T0 })).toEqual([]);
      clock.advance(1);
      expect(await store.activeLeases({ dueBy: T0 + GRACE_MS })).toHaveLength(2);
    });
  });
}
