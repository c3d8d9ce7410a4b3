import { describe, expect, it } from 'vitest';
import { watchParent } from './parent-watch.js';

const until = async (cond: () => boolean) => {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
};

describe('watchParent', () => {
  it('calls back once, with the former parent pid, when the parent pid changes', async () => {
    let parent = 4242;
    const gone: number[] = [];
    const stop = watchParent((pid) => gone.push(pid), { parentPid: () => parent, intervalMs: 10 });
    try {
      await new Promise((r) => setTimeout(r, 50));
      expect(gone).toEqual([]); // the same parent: nothing
      parent = 1; // adopted by init
      await until(() => gone.length > 0);
      parent = 7;
      await new Promise((r) => setTimeout(r, 50));
      expect(gone).toEqual([4242]);
    } finally {
      stop();
    }
  });

  it('stops watching when told', async () => {
    let parent = 10;
    let calls = 0;
    const stop = watchParent(
      () => {
        calls++;
      },
      { parentPid: () => parent, intervalMs: 10 },
    );
    stop();
    parent = 1;
    await new Promise((r) => setTimeout(r, 50));
    expect(calls).toBe(0);
  });
});
