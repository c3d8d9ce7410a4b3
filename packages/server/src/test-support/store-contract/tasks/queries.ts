/** Contract: nextClaimableAt and queueStats. */
import { describe, expect, it } from 'vitest';
import { BACKOFF, expectCode, type Harness, T0, writer } from '../harness.js';

export function queriesContract(h: () => Harness): void {
  describe('nextClaimableAt and queueStats', () => {
    it('finds the earliest future claimable moment, per type', async () => {
      const { store } = h();
      expect(await store.nextClaimableAt()).toBeNull();
      await h().create({ type: 'now' });
      expect(await store.nextClaimableAt()).toBeNull();
      await h().create({ type: 'later', runAt: T0 + 9000 });
      await h().create({ type: 'soon', runAt: T0 + 3000 });
      const running = await h().running({ type: 'retry' });
      await store.failTask({
        ...writer(running),
        error: { code: 'x', message: 'x', retryable: true },
        backoff: BACKOFF,
      });
      expect(await store.nextClaimableAt()).toBe(T0 + 1000);
      expect(await store.nextClaimableAt(['later', 'soon'])).toBe(T0 + 3000);
      expect(await store.nextClaimableAt(['later'])).toBe(T0 + 9000);
      expect(await store.nextClaimableAt(['now'])).toBeNull();
      expect(await store.nextClaimableAt([])).toBeNull();
      h().clock.set(T0 + 3000);
      expect(await store.nextClaimableAt(['later', 'soon'])).toBe(T0 + 9000);
    });

    it('from a given moment, also finds what became claimable since then', async () => {
      const { store } = h();
      await h().create({ type: 'soon', runAt: T0 + 3000 });
      await h().create({ type: 'later', runAt: T0 + 9000 });
      h().clock.set(T0 + 3005);
      expect(await store.nextClaimableAt(['soon'])).toBeNull();
      expect(await store.nextClaimableAt(['soon'], T0 + 2990)).toBe(T0 + 3000);
      expect(await store.nextClaimableAt(['soon'], T0 + 3000)).toBeNull();
      expect(await store.nextClaimableAt(undefined, T0 + 2990)).toBe(T0 + 3000);
      expect(await store.nextClaimableAt(['later'], T0 + 2990)).toBe(T0 + 9000);
      // Claimed meanwhile: no longer waiting to be claimed, so not found.
      expect(await h().claim('agt_a', ['soon'], 1)).toHaveLength(1);
      expect(await store.nextClaimableAt(['soon'], T0 + 2990)).toBeNull();
    });

    it('counts the claimable tasks a claim would take first', async () => {
      const { store } = h();
      const a = await h().create({ type: 'q' });
      const b = await h().create({ type: 'q' });
      const urgent = await h().create({ type: 'q', priority: 10 });
      const c = await h().create({ type: 'q' });
      const scheduled = await h().create({ type: 'q', runAt: T0 + 60_000 });
      await h().create({ type: 'elsewhere', priority: 99 });
      expect(await store.queueStats(urgent.id)).toEqual({ ahead: 0 });
      expect(await store.queueStats(a.id)).toEqual({ ahead: 1 });
      expect(await store.queueStats(c.id)).toEqual({ ahead: 3 });
      // Not claimable yet: the claimable ones that would go before it.
      expect(await store.queueStats(scheduled.id)).toEqual({ ahead: 4 });
      await h().claim('agt_a', ['q'], 2);
      expect(await store.queueStats(b.id)).toEqual({ ahead: 0 });
      expect(await store.queueStats(c.id)).toEqual({ ahead: 1 });
      expect(await store.queueStats(urgent.id)).toEqual({ ahead: 0 });
      await expectCode(store.queueStats('tsk_nope'), 'not_found');
    });
  });
}
