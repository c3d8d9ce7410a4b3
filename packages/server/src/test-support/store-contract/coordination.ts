/**
 * Contract: several coordinators — lease shards (take, renew, take over after expiry with epoch + 1,
 * release all or some, list), coordinator presence (announce, list, lapse, withdraw), leases per
 * shard, and claimable notices reaching a subscriber.
 */
import { describe, expect, it } from 'vitest';
import { LEASE_SHARD_COUNT, shardOf } from '../../store/lease-shards.js';
import type { ClaimableNotice, StreamNotice } from '../../store/store.js';
import { BACKOFF, type Harness, T0 } from './harness.js';

const TTL = 5000;

/** Wait (real time) until `pred` holds; notices travel through the database on PostgreSQL. */
async function until(pred: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!pred()) {
    if (performance.now() > deadline) throw new Error(`not true within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export function shardsContract(h: () => Harness): void {
  const acquire = (ownerId: string, want: number, shardCount = 8) =>
    h().store.acquireShardLeases({ ownerId, shardCount, want, ttlMs: TTL });

  describe('lease shards', () => {
    it('takes free shards lowest first, renews its own, and takes over lapsed ones with epoch + 1', async () => {
      const { store, clock } = h();
      const a = await acquire('a', 5);
      expect(a).toEqual(
        [0, 1, 2, 3, 4].map((shard) => ({ shard, ownerId: 'a', epoch: 1, expiresAt: T0 + TTL })),
      );
      const b = await acquire('b', 8);
      expect(b.map((l) => [l.shard, l.epoch])).toEqual([
        [5, 1],
        [6, 1],
        [7, 1],
      ]);

      clock.advance(3000);
      const renewed = await acquire('a', 5);
      expect(renewed.map((l) => [l.shard, l.epoch, l.expiresAt])).toEqual(
        [0, 1, 2, 3, 4].map((s) => [s, 1, T0 + 3000 + TTL]),
      );

      // b stops renewing; once its leases lapse a takes them over, each with a new epoch.
      clock.set(T0 + TTL);
      const more = await acquire('a', 8);
      expect(more.map((l) => [l.shard, l.epoch])).toEqual([
        [0, 1],
        [1, 1],
        [2, 1],
        [3, 1],
        [4, 1],
        [5, 2],
        [6, 2],
        [7, 2],
      ]);
      expect(await acquire('b', 8)).toEqual([]);
      expect((await store.listShardLeases()).map((l) => [l.shard, l.ownerId])).toEqual(
        [0, 1, 2, 3, 4, 5, 6, 7].map((s) => [s, 'a']),
      );
    });

    it('does not go past want, and a released shard goes to a survivor at once', async () => {
      const { store } = h();
      expect(await acquire('a', 0)).toEqual([]);
      expect(await acquire('a', 3)).toHaveLength(3);
      expect(await acquire('a', 3)).toHaveLength(3);
      expect(await acquire('b', 8)).toHaveLength(5);
      await store.releaseShardLeases('a');
      const b = await acquire('b', 8);
      expect(b.map((l) => [l.shard, l.ownerId, l.epoch])).toEqual([
        [0, 'b', 2],
        [1, 'b', 2],
        [2, 'b', 2],
        [3, 'b', 1],
        [4, 'b', 1],
        [5, 'b', 1],
        [6, 'b', 1],
        [7, 'b', 1],
      ]);
      await store.releaseShardLeases('nobody');
      expect((await store.listShardLeases()).every((l) => l.ownerId === 'b')).toBe(true);
    });

    it('gives each shard to one of two coordinators asking at once', async () => {
      const [a, b] = await Promise.all([acquire('a', 64, 64), acquire('b', 64, 64)]);
      const shards = [...a!, ...b!].map((l) => l.shard).sort((x, y) => x - y);
      expect(shards).toEqual([...Array(64).keys()]);
      const listed = await h().store.listShardLeases();
      expect(listed).toHaveLength(64);
      expect(listed.every((l) => l.epoch === 1)).toBe(true);
    });

    it('releases chosen shards only: a renewal skips them, another owner takes them with epoch + 1', async () => {
      const { store, clock } = h();
      expect(await acquire('a', 8)).toHaveLength(8);
      await store.announceCoordinator({ ownerId: 'a', ttlMs: TTL });
      await store.releaseShardLeases('a', [6, 7, 42]); // 42: not held, left alone
      await store.releaseShardLeases('b', [0]); // not b's: nothing happens
      clock.advance(1000);
      const renewed = await acquire('a', 6);
      expect(renewed.map((l) => [l.shard, l.epoch, l.expiresAt])).toEqual(
        [0, 1, 2, 3, 4, 5].map((s) => [s, 1, T0 + 1000 + TTL]),
      );
      const b = await acquire('b', 8);
      expect(b.map((l) => [l.shard, l.ownerId, l.epoch])).toEqual([
        [6, 'b', 2],
        [7, 'b', 2],
      ]);
      // A partial release keeps the presence.
      expect((await store.listCoordinators()).map((c) => c.id)).toEqual(['a']);
      await expect(store.releaseShardLeases('a', [-1])).rejects.toMatchObject({ code: 'validation_failed' });
    });

    it('takes its own lapsed shards again with epoch + 1, and never renews past expiry', async () => {
      const { clock } = h();
      await acquire('a', 4);
      clock.advance(TTL); // lapsed: nobody took them
      const again = await acquire('a', 2);
      expect(again.map((l) => [l.shard, l.epoch, l.expiresAt])).toEqual([
        [0, 2, T0 + 2 * TTL],
        [1, 2, T0 + 2 * TTL],
      ]);
      // 2 and 3 stay lapsed, free for anyone.
      expect((await acquire('b', 8)).map((l) => [l.shard, l.epoch])).toEqual([
        [2, 2],
        [3, 2],
        [4, 1],
        [5, 1],
        [6, 1],
        [7, 1],
      ]);
    });

    it('gives each released shard to one of two coordinators taking at once', async () => {
      const { store } = h();
      await acquire('a', 64, 64);
      await store.releaseShardLeases(
        'a',
        [...Array(32).keys()].map((i) => i + 32),
      );
      const [b, c] = await Promise.all([acquire('b', 32, 64), acquire('c', 32, 64)]);
      const taken = [...b!, ...c!].map((l) => l.shard).sort((x, y) => x - y);
      expect(taken).toEqual([...Array(32).keys()].map((i) => i + 32));
      const listed = await store.listShardLeases();
      expect(listed.filter((l) => l.ownerId === 'a').map((l) => l.shard)).toEqual([...Array(32).keys()]);
      expect(listed.filter((l) => l.shard >= 32).every((l) => l.epoch === 2)).toBe(true);
    });

    it('lists the held leases of chosen shards only', async () => {
      const { store } = h();
      await store.createTasks(Array.from({ length: 30 }, () => h().newTask({ type: 'sharded' })));
      const claimed = await store.claimTasks({
        agentId: 'agt_a',
        types: ['sharded'],
        max: 30,
        start: true,
        backoff: BACKOFF,
      });
      const ids = claimed.map((c) => c.task.id);
      const shard = shardOf(ids[0]!);
      const ofShard = (count: number, wanted: number[]) =>
        ids.filter((id) => wanted.includes(shardOf(id, count))).sort();
      const leases = async (ids: number[], count: number) =>
        (await store.activeLeases({ shards: { ids, count } })).map((l) => l.taskId).sort();
      expect(await leases([shard], LEASE_SHARD_COUNT)).toEqual(ofShard(LEASE_SHARD_COUNT, [shard]));
      expect(await leases([0, 2], 4)).toEqual(ofShard(4, [0, 2]));
      expect(await leases([], LEASE_SHARD_COUNT)).toEqual([]);
      expect(
        (await store.activeLeases({ shards: { ids: [...Array(64).keys()], count: 64 } }))
          .map((l) => l.taskId)
          .sort(),
      ).toEqual([...ids].sort());
    });
  });

  describe('coordinator presence', () => {
    it('keeps one instance per id: another live instance is refused until the presence lapses', async () => {
      const { store, clock } = h();
      await store.announceCoordinator({ ownerId: 'x', ttlMs: TTL, instance: 'first' });
      clock.advance(100);
      const refused = await store.announceCoordinator({ ownerId: 'x', ttlMs: TTL, instance: 'second' }).then(
        () => null,
        (err: unknown) => err,
      );
      expect(refused).toMatchObject({
        code: 'conflict',
        details: { coordinatorId: 'x', expiresAt: T0 + TTL },
      });
      // The first renews as before, and nothing of the second was written.
      expect(await store.announceCoordinator({ ownerId: 'x', ttlMs: TTL, instance: 'first' })).toEqual([
        { id: 'x', lastSeenAt: T0 + 100, expiresAt: T0 + 100 + TTL, listening: false, tokens: null },
      ]);
      // Lapsed (the first stopped renewing): the second takes the id, and now the first is refused.
      clock.set(T0 + 100 + TTL);
      expect(
        (await store.announceCoordinator({ ownerId: 'x', ttlMs: TTL, instance: 'second' })).map((c) => c.id),
      ).toEqual(['x']);
      await expect(
        store.announceCoordinator({ ownerId: 'x', ttlMs: TTL, instance: 'first' }),
      ).rejects.toMatchObject({ code: 'conflict' });
      // Other ids are not concerned; an announcement without an instance writes as it always did.
      expect(
        (await store.announceCoordinator({ ownerId: 'y', ttlMs: TTL, instance: 'first' })).map((c) => c.id),
      ).toEqual(['x', 'y']);
      expect((await store.announceCoordinator({ ownerId: 'x', ttlMs: TTL })).map((c) => c.id)).toEqual([
        'x',
        'y',
      ]);
    });

    it('announces, lists the live ones by id, forgets lapsed ones, and withdraws on a full release', async () => {
      const { store, clock } = h();
      expect(await store.listCoordinators()).toEqual([]);
      expect(await store.announceCoordinator({ ownerId: 'b', ttlMs: TTL })).toEqual([
        { id: 'b', lastSeenAt: T0, expiresAt: T0 + TTL, listening: false, tokens: null },
      ]);
      clock.advance(1000);
      const both = await store.announceCoordinator({
        ownerId: 'a',
        ttlMs: 2 * TTL,
        listening: true,
        tokens: 'admin:0123456789ab,enrollment:-,readonly:-',
      });
      expect(both).toEqual([
        {
          id: 'a',
          lastSeenAt: T0 + 1000,
          expiresAt: T0 + 1000 + 2 * TTL,
          listening: true,
          tokens: 'admin:0123456789ab,enrollment:-,readonly:-',
        },
        { id: 'b', lastSeenAt: T0, expiresAt: T0 + TTL, listening: false, tokens: null },
      ]);
      expect(await store.listCoordinators()).toEqual(both);

      clock.set(T0 + TTL); // b's presence lapses (it stopped announcing)
      expect((await store.listCoordinators()).map((c) => c.id)).toEqual(['a']);
      expect((await store.announceCoordinator({ ownerId: 'c', ttlMs: TTL })).map((c) => c.id)).toEqual([
        'a',
        'c',
      ]);
      // Renewing moves the expiry; b comes back as new.
      const again = await store.announceCoordinator({ ownerId: 'b', ttlMs: TTL });
      expect(again.map((c) => [c.id, c.lastSeenAt])).toEqual([
        ['a', T0 + 1000],
        ['b', T0 + TTL],
        ['c', T0 + TTL],
      ]);
      // Whether it has event-stream clients is written with every announcement.
      await store.announceCoordinator({ ownerId: 'a', ttlMs: TTL });
      expect((await store.listCoordinators()).map((c) => c.listening)).toEqual([false, false, false]);

      // A full release withdraws the presence and frees every shard at once.
      await acquire('c', 3);
      await store.releaseShardLeases('c');
      expect((await store.listCoordinators()).map((c) => c.id)).toEqual(['a', 'b']);
      expect((await acquire('a', 8)).map((l) => [l.shard, l.epoch])).toEqual(
        [0, 1, 2, 3, 4, 5, 6, 7].map((s) => [s, s < 3 ? 2 : 1]),
      );
      await expect(store.announceCoordinator({ ownerId: '', ttlMs: TTL })).rejects.toMatchObject({
        code: 'validation_failed',
      });
      await expect(store.announceCoordinator({ ownerId: 'a', ttlMs: 0 })).rejects.toMatchObject({
        code: 'validation_failed',
      });
    });
  });

  describe('claimable notices', () => {
    it('reach every subscriber, origin and all, until it unsubscribes', async () => {
      const { store } = h();
      const first: ClaimableNotice[] = [];
      const second: ClaimableNotice[] = [];
      const stopFirst = store.onClaimable((n) => first.push(n));
      const stopSecond = store.onClaimable((n) => {
        second.push(n);
        throw new Error('a failing listener does not stop the others');
      });
      await store.publishClaimable({ types: ['a', 'b'], origin: 'coord-1' });
      await until(() => first.length === 1 && second.length === 1);
      expect(first).toEqual([{ types: ['a', 'b'], origin: 'coord-1' }]);
      expect(second).toEqual(first);

      stopFirst();
      await store.publishClaimable({ types: ['c'] });
      await until(() => second.length === 2);
      expect(second[1]).toEqual({ types: ['c'] });
      expect(first).toHaveLength(1);
      stopSecond();
    });

    describe('stream notices', () => {
      it('reach every subscriber, split as the channel needs, until it unsubscribes', async () => {
        const { store } = h();
        const heard: StreamNotice[] = [];
        const stop = store.onStreamNotices((n) => heard.push(n));
        const small: StreamNotice = {
          origin: 'coord-1',
          refs: [
            { kind: 'transition', taskId: 'tsk_a', seq: 2 },
            { kind: 'progress', taskId: 'tsk_b' },
            { kind: 'agent', agentId: 'agt_c', event: 'registered' },
            { kind: 'agent', agentId: 'agt_c', event: 'status' },
          ],
        };
        await store.publishStreamNotice(small);
        await until(() => heard.length === 1);
        expect(heard).toEqual([small]);
        // More than one notification holds (PostgreSQL: under 8,000 bytes each): all arrive, in order.
        const many: StreamNotice = {
          origin: 'coord-2',
          refs: Array.from({ length: 600 }, (_, i) => ({
            kind: 'transition' as const,
            taskId: `tsk_${String(i).padStart(26, '0')}`,
            seq: i + 1,
          })),
        };
        await store.publishStreamNotice(many);
        await until(() => heard.slice(1).flatMap((n) => n.refs).length === 600);
        expect(heard.slice(1).every((n) => n.origin === 'coord-2')).toBe(true);
        expect(heard.slice(1).flatMap((n) => n.refs)).toEqual(many.refs);
        stop();
        const before = heard.length;
        await store.publishStreamNotice(small);
        await new Promise((r) => setTimeout(r, 50));
        expect(heard).toHaveLength(before);
      });

      it('reads back the tasks and history entries they name, skipping what does not exist', async () => {
        const { store } = h();
        const running = await h().running();
        const read = await store.readTransitions([
          { taskId: running.id, seq: 3 },
          { taskId: 'tsk_missing', seq: 1 },
          { taskId: running.id, seq: 99 },
          { taskId: running.id, seq: 1 },
        ]);
        expect(read.map((r) => [r.task.id, r.task.status, r.event.seq, r.event.from, r.event.to])).toEqual([
          [running.id, 'running', 3, 'claimed', 'running'],
          [running.id, 'running', 1, null, 'created'],
        ]);
        const history = await store.listTaskEvents(running.id);
        expect(read[0]!.event).toEqual(history[2]);
        expect(read[1]!.event).toEqual(history[0]);
        expect(await store.readTransitions([])).toEqual([]);
      });
    });
  });
}
