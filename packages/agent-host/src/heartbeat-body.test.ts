import type { SupervisedChild } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import { splitChildren } from './heartbeat-body.js';

const child = (n: number): SupervisedChild => ({
  agentKey: `host/p-${n}`,
  program: 'p',
  instance: n,
  plain: false,
  pid: 1000 + n,
  state: 'running',
  restarts: 0,
  outputAt: null,
});

describe('splitChildren', () => {
  it('keeps every group under the size, in order, and never makes an empty group', () => {
    const all = Array.from({ length: 200 }, (_, i) => child(i + 1));
    const groups = splitChildren(all, 2000);
    expect(groups.length).toBeGreaterThan(1);
    expect(groups.flat()).toEqual(all);
    for (const g of groups) {
      expect(g.length).toBeGreaterThan(0);
      expect(JSON.stringify(g).length).toBeLessThanOrEqual(2000);
    }
    expect(splitChildren([], 2000)).toEqual([[]]);
    expect(splitChildren(all, 1_000_000)).toEqual([all]);
  });
});
