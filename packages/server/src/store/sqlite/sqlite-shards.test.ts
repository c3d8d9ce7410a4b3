/**
 * Lease shards and claimable notices on SQLite: the shard rules (take free, renew own, take expired
 * with epoch + 1, release), overdue leases per shard, and the 0002 migration's shard column.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { BACKOFF, newTask, T0, TIMING } from '../../test-support/store-contract/harness.js';
import { LEASE_SHARD_COUNT, shardOf } from '../lease-shards.js';
import type { ClaimableNotice, Store } from '../store.js';
import { createSqliteStore } from './sqlite-store.js';

describe('SQLite lease shards', () => {
  let clock: ManualClock;
  let store: Store;
  beforeEach(() => {
    clock = new ManualClock(T0);
    store = createSqliteStore({ path: ':memory:', clock });
  });
  afterEach(() => store.close());

  it('one coordinator takes every shard; a second gets none until the first lapses or releases', async () => {
    const a = await store.acquireShardLeases({
      ownerId: 'a',
      shardCount: LEASE_SHARD_COUNT,
      want: 64,
      ttlMs: 5000,
    });
    expect(a.map((l) => l.shard)).toEqual([...Array(64).keys()]);
    expect(a.every((l) => l.epoch === 1 && l.expiresAt === T0 + 5000)).toBe(true);
    expect(await store.acquireShardLeases({ ownerId: 'b', shardCount: 64, want: 64, ttlMs: 5000 })).toEqual(
      [],
    );

    clock.advance(3000);
    const renewed = await store.acquireShardLeases({ ownerId: 'a', shardCount: 64, want: 64, ttlMs: 5000 });
    expect(renewed.every((l) => l.expiresAt === T0 + 8000 && l.epoch === 1)).toBe(true);

    clock.advance(5000); // a stopped renewing: its leases lapse
    const b = await store.acquireShardLeases({ ownerId: 'b', shardCount: 64, want: 10, ttlMs: 5000 });
    expect(b.map((l) => l.shard)).toEqual([...Array(10).keys()]);
    expect(b.every((l) => l.epoch === 2)).toBe(true);
    // a comes back: renews only what it still holds, takes the rest that lapsed
    const a2 = await store.acquireShardLeases({ ownerId: 'a', shardCount: 64, want: 64, ttlMs: 5000 });
    expect(a2).toHaveLength(54);
    expect(a2.every((l) => l.shard >= 10)).toBe(true);

    await store.releaseShardLeases('a');
    const b2 = await store.acquireShardLeases({ ownerId: 'b', shardCount: 64, want: 64, ttlMs: 5000 });
    expect(b2).toHaveLength(64);
    const all = await store.listShardLeases();
    expect(new Set(all.map((l) => l.ownerId))).toEqual(new Set(['b']));
  });

  it('overdue leases are found per shard', async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `tsk_${i}`);
    await store.createTasks(ids.map((id) => newTask(id)));
    const claimed = await store.claimTasks({
      agentId: 'agt',
      types: ['work'],
      max: 40,
      start: true,
      backoff: BACKOFF,
    });
    expect(claimed).toHaveLength(40);
    clock.advance(TIMING.heartbeatTimeoutMs + 1);
    const now = clock.now();
    const some = [shardOf('tsk_1'), shardOf('tsk_2')];
    const due = await store.activeLeases({ dueBy: now, shards: { ids: some, count: LEASE_SHARD_COUNT } });
    expect(due.length).toBeGreaterThanOrEqual(1);
    expect(due.every((l) => some.includes(shardOf(l.taskId)))).toBe(true);
    const expected = ids.filter((id) => some.includes(shardOf(id))).sort();
    expect(due.map((l) => l.taskId).sort()).toEqual(expected);
    // another shard count filters by the id's hash
    const other = await store.activeLeases({ shards: { ids: [0], count: 2 } });
    expect(other.map((l) => l.taskId).sort()).toEqual(ids.filter((id) => shardOf(id, 2) === 0).sort());
    expect(await store.activeLeases({ shards: { ids: [], count: 64 } })).toEqual([]);
  });

  it('publishClaimable reaches local subscribers, after the caller’s turn', async () => {
    const got: ClaimableNotice[] = [];
    const off = store.onClaimable((n) => got.push(n));
    await store.publishClaimable({ types: ['a', 'b'], origin: 'me' });
    await Promise.resolve();
    expect(got).toEqual([{ types: ['a', 'b'], origin: 'me' }]);
    off();
    await store.publishClaimable({ types: ['c'] });
    await Promise.resolve();
    expect(got).toHaveLength(1);
  });
});
