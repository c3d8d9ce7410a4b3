import { describe, expect, it } from 'vitest';
import { forEachLimited } from './limited.js';

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('forEachLimited', () => {
  it('runs every item, never more than the limit at once, starting them in order', async () => {
    let inFlight = 0;
    let most = 0;
    const started: number[] = [];
    await forEachLimited([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      started.push(n);
      inFlight++;
      most = Math.max(most, inFlight);
      for (let i = 0; i < n % 3; i++) await tick();
      inFlight--;
    });
    expect(started).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(most).toBe(3);
  });

  it('no items: resolves at once; a limit below 1 runs one at a time', async () => {
    await forEachLimited([], 4, async () => {
      throw new Error('not called');
    });
    let inFlight = 0;
    let most = 0;
    await forEachLimited([1, 2, 3], 0, async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      await tick();
      inFlight--;
    });
    expect(most).toBe(1);
  });

  it('a rejection rejects the whole and starts no further item', async () => {
    const started: number[] = [];
    await expect(
      forEachLimited([1, 2, 3, 4, 5], 2, async (n) => {
        started.push(n);
        await tick();
        if (n === 2) throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await tick();
    expect(started).toEqual([1, 2, 3]);
  });
});
