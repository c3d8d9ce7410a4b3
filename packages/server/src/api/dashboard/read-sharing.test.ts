/** The dashboard's shared reads: one computation for the pages that ask together, bounded by its cost. */
import { describe, expect, it } from 'vitest';
import { SharedReads } from './read-sharing.js';

function setup() {
  const state = { seq: 0, now: 1_000_000, loads: 0 };
  const reads = new SharedReads(
    () => state.seq,
    () => state.now,
  );
  /** A load that costs `costMs` on the clock and answers with how many loads ran so far. */
  const load = (costMs: number) => async () => {
    state.loads++;
    const n = state.loads;
    state.now += costMs;
    return n;
  };
  return { state, reads, load };
}

describe('SharedReads', () => {
  it('pages asking together share one computation; it is reused while no event arrives', async () => {
    const { state, reads, load } = setup();
    const opts = { minMs: 250, costFactor: 10 };
    const a = reads.read('tasks', opts, load(5));
    const b = reads.read('tasks', opts, load(5));
    expect([await a.value, await b.value]).toEqual([1, 1]);
    expect([a.staleMs, b.staleMs]).toEqual([0, 0]);
    // Nothing changed: reused however long ago it was computed.
    state.now += 60_000;
    expect(await reads.read('tasks', opts, load(5)).value).toBe(1);
    // Another key is its own computation.
    expect(await reads.read('agents', opts, load(5)).value).toBe(2);
    expect(state.loads).toBe(2);
  });

  it('after an event: reused, marked stale, until minMs or costFactor × its cost; then computed anew', async () => {
    const { state, reads, load } = setup();
    const opts = { minMs: 1000, costFactor: 50 };
    await reads.read('summary', opts, load(100)).value; // cost 100 ms: kept 5 s
    state.seq++;
    state.now += 900; // 1 s after it began
    const stale = reads.read('summary', opts, load(100));
    expect(await stale.value).toBe(1);
    expect(stale.staleMs).toBe(4000);
    state.now += 3999;
    expect(reads.read('summary', opts, load(100)).staleMs).toBe(1);
    state.now += 1;
    const fresh = reads.read('summary', opts, load(100));
    expect(await fresh.value).toBe(2);
    expect(fresh.staleMs).toBe(0);
    // A cheap read is kept minMs.
    await reads.read('cheap', opts, load(1)).value;
    state.seq++;
    state.now += 998; // 999 ms after it began
    expect(await reads.read('cheap', opts, load(1)).value).toBe(3);
    state.now += 1;
    expect(await reads.read('cheap', opts, load(1)).value).toBe(4);
  });

  it('a failed computation is not kept', async () => {
    const { state, reads } = setup();
    const opts = { minMs: 250, costFactor: 10 };
    const failing = reads.read('x', opts, async () => {
      throw new Error('store down');
    });
    await expect(failing.value).rejects.toThrow('store down');
    await Promise.resolve();
    expect(await reads.read('x', opts, async () => 7).value).toBe(7);
    expect(state.loads).toBe(0);
  });
});
