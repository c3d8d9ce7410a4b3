import { describe, expect, it } from 'vitest';
import { createNoticeBatcher } from './notice-batcher.js';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('notice batcher', () => {
  it('publishes what one turn added as one batch, with one publish in flight, and dedupes when asked', async () => {
    const batches: string[][] = [];
    let release: () => void = () => {};
    const b = createNoticeBatcher<string>({
      unique: true,
      publish: (batch) => {
        batches.push(batch);
        return new Promise<void>((resolve) => {
          release = resolve;
        });
      },
      onFailure: () => {},
    });
    b.add('a');
    b.add('b');
    b.add('a');
    expect(batches).toEqual([]);
    await turn();
    expect(batches).toEqual([['a', 'b']]);
    b.add('c'); // while the first publish is in flight: waits for it
    b.add('c');
    await turn();
    expect(batches).toHaveLength(1);
    release();
    await turn();
    await turn();
    expect(batches).toEqual([['a', 'b'], ['c']]);
    release();
    b.stop();
    b.add('d');
    await turn();
    expect(batches).toHaveLength(2);
  });

  it('reports a failure once until a publish succeeds again', async () => {
    const failures: string[][] = [];
    let fail = true;
    const b = createNoticeBatcher<string>({
      publish: () => (fail ? Promise.reject(new Error('down')) : Promise.resolve()),
      onFailure: (_err, batch) => failures.push(batch),
    });
    for (const item of ['x', 'y']) {
      b.add(item);
      b.add(item); // not unique: both go out
      await turn();
      await turn();
    }
    expect(failures).toEqual([['x', 'x']]);
    fail = false;
    b.add('ok');
    await turn();
    await turn();
    fail = true;
    b.add('z');
    await turn();
    await turn();
    expect(failures).toEqual([['x', 'x'], ['z']]);
  });
});
