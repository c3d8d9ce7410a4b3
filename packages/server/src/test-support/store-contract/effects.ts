/**
 * Contract: effect keys — one claim wins (also when racing), a recorded result is what every later
 * claim gets, a lapsed claim can be taken again (and its late record is refused), release frees the
 * key, keys expire after their TTL and are deleted.
 */
import { describe, expect, it } from 'vitest';
import type { ClaimEffectInput } from '../../store/store.js';
import { type Harness, T0, uniqueId } from './harness.js';

const MINUTE = 60_000;

function claim(taskId: string, key: string, overrides: Partial<ClaimEffectInput> = {}): ClaimEffectInput {
  return {
    taskId,
    key,
    claimId: uniqueId('clm'),
    agentId: 'agt_a',
    claimTtlMs: MINUTE,
    ttlMs: 60 * MINUTE,
    ...overrides,
  };
}

export function effectsContract(h: () => Harness): void {
  describe('effect keys', () => {
    it('the first claim runs the effect; its recorded result is what every later claim gets', async () => {
      const { store, clock } = h();
      const taskId = uniqueId('tsk');
      const first = claim(taskId, 'send-invoice');
      expect(await store.claimEffect(first)).toEqual({
        outcome: 'claimed',
        claimId: first.claimId,
        claimExpiresAt: T0 + MINUTE,
      });
      // While it runs, another attempt is told so (and when the claim would lapse).
      expect(await store.claimEffect(claim(taskId, 'send-invoice', { agentId: 'agt_b' }))).toEqual({
        outcome: 'running',
        claimExpiresAt: T0 + MINUTE,
      });
      clock.advance(500);
      const result = { messageId: 'm-1', to: ['a@example.com'] };
      expect(
        await store.recordEffect({
          taskId,
          key: 'send-invoice',
          claimId: first.claimId,
          result,
          ttlMs: MINUTE * 60,
        }),
      ).toEqual({ outcome: 'recorded', result, doneAt: T0 + 500 });
      clock.advance(10 * MINUTE); // long after the claim would have lapsed: recorded keys stay done
      expect(await store.claimEffect(claim(taskId, 'send-invoice', { agentId: 'agt_c' }))).toEqual({
        outcome: 'done',
        result,
        doneAt: T0 + 500,
      });
      // Recording again (a retried request) changes nothing and answers with the kept result.
      expect(
        await store.recordEffect({
          taskId,
          key: 'send-invoice',
          claimId: first.claimId,
          result: 'x',
          ttlMs: MINUTE,
        }),
      ).toEqual({ outcome: 'done', result, doneAt: T0 + 500 });
      // Keys are per task, and a null result is a result.
      const other = claim(uniqueId('tsk'), 'send-invoice');
      expect((await store.claimEffect(other)).outcome).toBe('claimed');
      expect(
        await store.recordEffect({
          taskId: other.taskId,
          key: 'send-invoice',
          claimId: other.claimId,
          result: null,
          ttlMs: MINUTE,
        }),
      ).toMatchObject({ outcome: 'recorded', result: null });
      expect(await store.claimEffect(claim(other.taskId, 'send-invoice'))).toMatchObject({
        outcome: 'done',
        result: null,
      });
    });

    it('of many attempts claiming one key at once exactly one runs it', async () => {
      const { store } = h();
      const taskId = uniqueId('tsk');
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          store.claimEffect(claim(taskId, 'charge', { agentId: `agt_${i}` })),
        ),
      );
      expect(results.filter((r) => r.outcome === 'claimed')).toHaveLength(1);
      expect(results.filter((r) => r.outcome === 'running')).toHaveLength(7);
    });

    it('a claim not recorded in time lapses: another attempt takes the key and the late record is refused', async () => {
      const { store, clock } = h();
      const taskId = uniqueId('tsk');
      const first = claim(taskId, 'k');
      await store.claimEffect(first);
      clock.advance(MINUTE - 1);
      expect((await store.claimEffect(claim(taskId, 'k'))).outcome).toBe('running');
      clock.advance(1);
      const second = claim(taskId, 'k', { agentId: 'agt_b' });
      expect(await store.claimEffect(second)).toEqual({
        outcome: 'claimed',
        claimId: second.claimId,
        claimExpiresAt: T0 + 2 * MINUTE,
      });
      await expect(
        store.recordEffect({ taskId, key: 'k', claimId: first.claimId, result: 1, ttlMs: MINUTE }),
      ).rejects.toMatchObject({ code: 'conflict' });
      expect(
        await store.recordEffect({ taskId, key: 'k', claimId: second.claimId, result: 2, ttlMs: MINUTE }),
      ).toMatchObject({ outcome: 'recorded', result: 2 });
      expect(await store.claimEffect(claim(taskId, 'k'))).toMatchObject({ outcome: 'done', result: 2 });
    });

    it('a released claim frees the key; only the holder of the claim can release it', async () => {
      const { store } = h();
      const taskId = uniqueId('tsk');
      const first = claim(taskId, 'k');
      await store.claimEffect(first);
      expect(await store.releaseEffect({ taskId, key: 'k', claimId: 'clm_other' })).toBe(false);
      expect(await store.releaseEffect({ taskId, key: 'k', claimId: first.claimId })).toBe(true);
      expect(await store.releaseEffect({ taskId, key: 'k', claimId: first.claimId })).toBe(false);
      await expect(
        store.recordEffect({ taskId, key: 'k', claimId: first.claimId, result: 1, ttlMs: MINUTE }),
      ).rejects.toMatchObject({ code: 'conflict' });
      expect((await store.claimEffect(claim(taskId, 'k'))).outcome).toBe('claimed');
    });

    it('keys expire after their TTL: a done key can be claimed again, and expired keys are deleted', async () => {
      const { store, clock } = h();
      const taskId = uniqueId('tsk');
      const keys = ['a', 'b', 'c'];
      for (const key of keys) {
        const c = claim(taskId, key);
        await store.claimEffect(c);
        await store.recordEffect({ taskId, key, claimId: c.claimId, result: key, ttlMs: 10 * MINUTE });
      }
      const kept = claim(taskId, 'kept', { ttlMs: 60 * MINUTE, claimTtlMs: 30 * MINUTE });
      await store.claimEffect(kept);
      clock.advance(10 * MINUTE - 1);
      expect(await store.claimEffect(claim(taskId, 'a'))).toMatchObject({ outcome: 'done', result: 'a' });
      clock.advance(1);
      // Expired but not deleted yet: it is claimable again all the same.
      const again = claim(taskId, 'a');
      expect(await store.claimEffect(again)).toMatchObject({ outcome: 'claimed', claimId: again.claimId });
      expect(await store.deleteExpiredEffects({ limit: 1 })).toBe(1);
      expect(await store.deleteExpiredEffects({ limit: 100 })).toBe(1);
      expect(await store.deleteExpiredEffects({ limit: 100 })).toBe(0);
      expect((await store.claimEffect(claim(taskId, 'kept'))).outcome).toBe('running');
      expect((await store.claimEffect(claim(taskId, 'b'))).outcome).toBe('claimed');
    });
  });
}
