/**
 * Lease shards balanced across live coordinators (issue 3), with a manual clock: shard managers on one
 * SQLite store stand for coordinators on one database. Three converge to 22/21/21; when one dies the
 * two survivors split its shards within one TTL plus one renewal; when one stops they take its shards
 * at their next renewal. At every step no shard has two owners, and a shard's epoch grows whenever it
 * changes hands.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../core/clock.js';
import { UnavailableError } from '../core/errors.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store } from '../store/store.js';
import { settle } from '../test-support/coordinator-fixture.js';
import { tokenFingerprints } from './auth.js';
import { createShardManager, fairShare, type ShardManager } from './shard-manager.js';

const TTL = 3000;
const RENEW = TTL / 3;
const COUNT = 64;

let clock: ManualClock;
let store: Store;
let managers: Map<string, { m: ShardManager; cut: { on: boolean } }>;
/** Owner and epoch of every shard at the last check. */
let seen: Map<number, { ownerId: string; epoch: number }>;

function setup(): void {
  clock = new ManualClock(1_700_000_000_000);
  store = createSqliteStore({ path: ':memory:', clock });
  managers = new Map();
  seen = new Map();
}

/** A coordinator whose store can be cut (to the others, it died). */
async function start(id: string): Promise<ShardManager> {
  const cut = { on: false };
  const view = new Proxy(store, {
    get(target, prop, receiver) {
      const v: unknown = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) =>
        cut.on
          ? Promise.reject(new UnavailableError('cut by the test'))
          : (v as (...a: unknown[]) => unknown).apply(target, args);
    },
  });
  const m = createShardManager({
    store: view,
    clock,
    logger: pino({ level: 'silent' }),
    ttlMs: TTL,
    ownerId: id,
  });
  managers.set(id, { m, cut });
  await m.start();
  await check();
  return m;
}

/**
 * No shard under two unexpired leases of two managers (the store's row agreeing), and epochs grow on
 * every change of hands. A manager cut off keeps believing in its leases, but they lapse before anyone
 * else may take them.
 */
async function check(): Promise<void> {
  const now = clock.now();
  const owners = new Map<number, string>();
  for (const [id, { m }] of managers) {
    for (const l of m.leases()) {
      if (l.expiresAt <= now) continue;
      expect(
        owners.get(l.shard),
        `shard ${l.shard} held by ${owners.get(l.shard)} and ${id}`,
      ).toBeUndefined();
      owners.set(l.shard, id);
    }
  }
  for (const l of await store.listShardLeases()) {
    const before = seen.get(l.shard);
    if (before !== undefined && before.ownerId !== l.ownerId) expect(l.epoch).toBeGreaterThan(before.epoch);
    if (before !== undefined) expect(l.epoch).toBeGreaterThanOrEqual(before.epoch);
    seen.set(l.shard, { ownerId: l.ownerId, epoch: l.epoch });
    const holder = owners.get(l.shard);
    if (holder !== undefined && l.expiresAt > now) expect(l.ownerId).toBe(holder);
  }
}

/** Move time in steps of 100 ms, letting each step's renewals finish, checking the invariants. */
async function advance(ms: number): Promise<void> {
  for (let left = ms; left > 0; left -= 100) {
    clock.advance(Math.min(100, left));
    for (let i = 0; i < 4; i++) await settle();
    await check();
  }
}

const counts = (...ids: string[]) => ids.map((id) => managers.get(id)!.m.held().ids.length);
const covered = (...ids: string[]) =>
  ids
    .flatMap((id) => managers.get(id)!.m.held().ids)
    .sort((a, b) => a - b)
    .join() === [...Array(COUNT).keys()].join();

/** Advance until `done` (checked every 100 ms) and return how long it took. */
async function until(done: () => boolean, limitMs: number): Promise<number> {
  const from = clock.now();
  while (!done()) {
    if (clock.now() - from > limitMs)
      throw new Error(`not balanced within ${limitMs} ms: ${counts('a', 'b', 'c')}`);
    await advance(100);
  }
  return clock.now() - from;
}

describe('fairShare', () => {
  it('splits evenly, the first by id getting the remainder, and adds up to the count', () => {
    expect(['a', 'b', 'c'].map((id) => fairShare(id, ['c', 'a', 'b'], 64))).toEqual([22, 21, 21]);
    expect(fairShare('a', [], 64)).toBe(64);
    expect(fairShare('z', ['a'], 64)).toBe(32); // counted even when missing from the list
    for (let n = 1; n <= 10; n++) {
      const ids = Array.from({ length: n }, (_, i) => `c${i}`);
      const shares = ids.map((id) => fairShare(id, ids, 64));
      expect(shares.reduce((x, y) => x + y, 0)).toBe(64);
      expect(Math.max(...shares)).toBe(Math.ceil(64 / n));
    }
  });
});

describe('coordinators of one store with different tokens', () => {
  it('are said, once, naming which token differs; the same tokens say nothing', async () => {
    setup();
    const lines: { msg: string; tokens?: string[]; other?: string }[] = [];
    const logger = pino({ level: 'error' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
    const same = tokenFingerprints({ admin: 'admin-token-0123456789', enrollment: 'agent-token-0123456789' });
    const other = tokenFingerprints({
      admin: 'another-admin-token-012',
      enrollment: 'agent-token-0123456789',
    });
    const made = [
      createShardManager({ store, clock, logger, ttlMs: TTL, ownerId: 'crd_a', tokens: same }),
      createShardManager({ store, clock, logger, ttlMs: TTL, ownerId: 'crd_b', tokens: same }),
    ];
    for (const m of made) await m.start();
    expect(lines).toEqual([]);
    const odd = createShardManager({ store, clock, logger, ttlMs: TTL, ownerId: 'crd_c', tokens: other });
    made.push(odd);
    await odd.start();
    for (let i = 0; i < 3; i++) {
      clock.advance(RENEW);
      await settle();
    }
    // crd_c says it of crd_a and crd_b; each of those says it of crd_c; and each only once.
    expect(lines.map((l) => [l.other, l.tokens])).toHaveLength(4);
    expect(new Set(lines.map((l) => l.tokens?.join()))).toEqual(new Set(['admin']));
    expect(lines[0]!.msg).toMatch(
      /accepts a different admin token than this one: a client that reaches both gets 401/,
    );
    for (const m of made) await m.stop();
    await store.close();
  });
});

describe('lease shards balanced across live coordinators', () => {
  afterEach(async () => {
    for (const { m, cut } of managers.values()) {
      cut.on = false;
      await m.stop();
    }
    await store.close();
  });

  it('three converge to 22/21/21; one dies and the survivors split its shards within TTL + one renewal', async () => {
    setup();
    await start('a');
    expect(counts('a')).toEqual([64]);
    await start('b');
    const twoIn = await until(() => counts('a', 'b').join() === '32,32', 3 * RENEW);
    expect(twoIn).toBeLessThanOrEqual(2 * RENEW);
    await start('c');
    const threeIn = await until(() => counts('a', 'b', 'c').join() === '22,21,21', 4 * RENEW);
    expect(threeIn).toBeLessThanOrEqual(2 * RENEW);
    expect(covered('a', 'b', 'c')).toBe(true);
    expect(managers.get('c')!.m.balance()).toEqual({ live: 3, share: 21 });
    await advance(5 * RENEW); // stable: nothing moves once balanced
    expect(counts('a', 'b', 'c')).toEqual([22, 21, 21]);
    const cShards = managers.get('c')!.m.held().ids;

    managers.get('c')!.cut.on = true; // c dies: it renews nothing any more
    const diedIn = await until(
      () => counts('a', 'b').join() === '32,32' && covered('a', 'b'),
      TTL + 2 * RENEW,
    );
    expect(diedIn).toBeLessThanOrEqual(TTL + RENEW);
    // Both survivors took some of c's shards, each with a new epoch.
    const leases = await store.listShardLeases();
    const owners = new Set(cShards.map((s) => leases[s]!.ownerId));
    expect(owners).toEqual(new Set(['a', 'b']));
    expect(cShards.every((s) => leases[s]!.epoch >= 3)).toBe(true); // a → c → a|b
    expect((await store.listCoordinators()).map((c) => c.id)).toEqual(['a', 'b']);
  });

  it('one stops gracefully: it withdraws and the others take its shards at their next renewal', async () => {
    setup();
    await start('a');
    await start('b');
    const c = await start('c');
    await until(() => counts('a', 'b', 'c').join() === '22,21,21', 6 * RENEW);
    await c.stop();
    managers.delete('c');
    expect((await store.listCoordinators()).map((x) => x.id)).toEqual(['a', 'b']);
    const stoppedIn = await until(() => counts('a', 'b').join() === '32,32' && covered('a', 'b'), 2 * RENEW);
    expect(stoppedIn).toBeLessThanOrEqual(RENEW);
  });

  it('a coordinator cut off and back takes only what is free, and the shares settle again', async () => {
    setup();
    await start('a');
    await start('b');
    await until(() => counts('a', 'b').join() === '32,32', 3 * RENEW);
    managers.get('a')!.cut.on = true;
    await until(() => counts('b').join() === '64', TTL + 2 * RENEW);
    managers.get('a')!.cut.on = false;
    await until(() => counts('a', 'b').join() === '32,32' && covered('a', 'b'), 4 * RENEW);
  });
});
