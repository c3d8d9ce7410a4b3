/**
 * Lease shards held by this coordinator (docs/design.md §8). Lease expiry is
 * split into `LEASE_SHARD_COUNT` shards; each is held by one coordinator under a renewable lease in
 * the store. The owner of a shard sweeps that shard's overdue leases.
 *
 * Balance: every `renewIntervalMs` (a third of the TTL) this coordinator announces itself live (its
 * presence lapses with its shards, after the same TTL) and learns who else is; its share is an even
 * split among the live ones, the first `count % live` by id getting one more (64 over 3: 22, 21, 21;
 * never more than ceil(count / live)). It renews what it holds and takes free or lapsed shards, lowest
 * first, up to its share; above it (a newcomer arrived), it releases the excess, highest shards first,
 * and a coordinator below its share takes them at its next renewal. So a newcomer gets its share
 * within two renewals, a coordinator that dies loses its shards to the survivors within one TTL plus
 * one renewal (its presence lapses with them, so their shares grow as they become free), and one that
 * stops withdraws its presence and releases everything, taken at the survivors' next renewal.
 *
 * Safety does not depend on the balance: a shard is one row with one owner, taken only once expired
 * (a conditional write, epoch + 1), so it never has two; between a release and a take it has none,
 * and its overdue leases wait for the next owner's sweep. Each coordinator also keeps exact timers for
 * the leases it granted or renewed, whoever owns their shard, and every expiry is a conditional write,
 * so a double action is harmless. On SQLite the one coordinator holds every shard through the same
 * path.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../core/clock.js';
import { RouseError } from '../core/errors.js';
import { LEASE_SHARD_COUNT } from '../store/lease-shards.js';
import type { CoordinatorPresence, ShardLease, Store } from '../store/store.js';

export interface ShardSet {
  ids: number[];
  count: number;
}

export interface ShardChange {
  gained: number[];
  lost: number[];
}

export interface ShardManager {
  readonly ownerId: string;
  /** The shards the last successful renewal returned (kept through a failed one: acting twice is harmless). */
  held(): ShardSet;
  /** The leases behind `held()`, with their epochs. */
  leases(): readonly ShardLease[];
  /** Live coordinators at the last renewal (this one included), and this one's share of the shards. */
  balance(): { live: number; share: number };
  /** At the last renewal, another live coordinator had clients on its live event stream. */
  othersListening(): boolean;
  /**
   * Claims the id (`claimId`: throws `conflict` when another live process goes by it), then the first
   * acquisition (awaited), then one renewal every `renewIntervalMs`.
   */
  start(): Promise<void>;
  /** Stop renewing, withdraw, and release every shard so the survivors take them at their next renewal. */
  stop(): Promise<void>;
  /** Renew now (tests, and after a store outage). */
  renew(): Promise<void>;
  onChange(listener: (change: ShardChange) => void | Promise<void>): void;
}

export interface ShardManagerDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  ttlMs: number;
  /** @default a random id */
  ownerId?: string;
  /** @default LEASE_SHARD_COUNT */
  shardCount?: number;
  /** Whether this coordinator has clients on its live event stream (announced with its presence). */
  listening?: () => boolean;
  /** Fingerprints of the tokens this coordinator accepts (`tokenFingerprints`), announced with its presence. */
  tokens?: string;
}

/** The names whose fingerprints differ between two `tokenFingerprints` strings. */
export function differingTokens(mine: string, theirs: string): string[] {
  const parse = (s: string) => new Map(s.split(',').map((kv) => kv.split(':') as [string, string]));
  const a = parse(mine);
  const b = parse(theirs);
  return [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k));
}

/**
 * The share of `shardCount` shards of coordinator `ownerId` among the live ones `liveIds` (it is
 * counted even when missing): an even split, the first `shardCount % live` by id (code-unit order)
 * getting one more, so that the shares add up to `shardCount`.
 */
export function fairShare(ownerId: string, liveIds: readonly string[], shardCount: number): number {
  const ids = [...new Set([...liveIds, ownerId])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const rank = ids.indexOf(ownerId);
  return Math.floor(shardCount / ids.length) + (rank < shardCount % ids.length ? 1 : 0);
}

/** How long past a same-id presence's expiry `claimId` tries again (a renewal in flight lands). */
const TWIN_MARGIN_MS = 250;

const isConflict = (err: unknown): err is RouseError => err instanceof RouseError && err.code === 'conflict';

export function newCoordinatorId(): string {
  return `crd_${randomBytes(8).toString('hex')}`;
}

export function createShardManager(deps: ShardManagerDeps): ShardManager {
  const { store, clock, logger, ttlMs } = deps;
  const ownerId = deps.ownerId ?? newCoordinatorId();
  const shardCount = deps.shardCount ?? LEASE_SHARD_COUNT;
  const renewIntervalMs = Math.max(1, Math.floor(ttlMs / 3));
  const listeners: ((change: ShardChange) => void | Promise<void>)[] = [];
  let current: ShardLease[] = [];
  let live = 1;
  let share = shardCount;
  let othersListening = false;
  let heldIds = new Set<number>();
  let timer: TimerHandle | null = null;
  let stopped = false;
  let failing = false;
  let inFlight: Promise<void> | null = null;
  /** Past `claimId`: what is under `ownerId` in the store is this coordinator's to release. */
  let announced = false;
  /** Another live instance holds `ownerId` (found at a renewal): this one holds no shards meanwhile. */
  let displaced = false;
  const instance = randomBytes(8).toString('hex');

  /** This process's presence under `ownerId` (a conflict: another live instance holds the id). */
  function announce(): Promise<CoordinatorPresence[]> {
    return store.announceCoordinator({
      ownerId,
      ttlMs,
      instance,
      listening: deps.listening?.() ?? false,
      ...(deps.tokens === undefined ? {} : { tokens: deps.tokens }),
    });
  }

  /** Peers (and their fingerprints) already said to accept other tokens: each is said once. */
  const mismatchesSaid = new Set<string>();
  /**
   * A live coordinator of the store that accepts other tokens than this one: a client sent to both
   * (behind a load balancer) gets 401 from one of them now and then. Said once per peer and tokens.
   */
  function checkTokens(present: readonly CoordinatorPresence[]): void {
    if (deps.tokens === undefined) return;
    for (const c of present) {
      if (c.id === ownerId || c.tokens === null || c.tokens === deps.tokens) continue;
      const key = `${c.id} ${c.tokens}`;
      if (mismatchesSaid.has(key)) continue;
      mismatchesSaid.add(key);
      const names = differingTokens(deps.tokens, c.tokens);
      logger.error(
        { coordinatorId: ownerId, other: c.id, tokens: names },
        `coordinator ${c.id} on this store accepts a different ${names.join(', ')} token than this one: a client that reaches both gets 401 from one of them. Give every coordinator of a store the same ROUSE_ADMIN_TOKEN, ROUSE_AGENT_TOKEN and ROUSE_READONLY_TOKEN`,
      );
    }
  }

  /** Announce, take or renew up to the share, release any excess (highest shards first). */
  async function balanceOnce(): Promise<ShardLease[]> {
    const present: CoordinatorPresence[] = await announce();
    othersListening = present.some((c) => c.id !== ownerId && c.listening);
    checkTokens(present);
    const want = fairShare(
      ownerId,
      present.map((c) => c.id),
      shardCount,
    );
    live = Math.max(present.length, 1);
    share = want;
    const leases = (await store.acquireShardLeases({ ownerId, shardCount, want, ttlMs })).sort(
      (a, b) => a.shard - b.shard,
    );
    if (leases.length <= want || stopped) return leases;
    const excess = leases.slice(want).map((l) => l.shard);
    try {
      await store.releaseShardLeases(ownerId, excess);
    } catch (err) {
      logger.warn(
        { err, shards: excess.length },
        'could not hand over lease shards above the share; retrying',
      );
      return leases; // still held (just renewed): they go at a later renewal
    }
    logger.info(
      { ownerId, released: excess.length, live, share },
      'handed over lease shards above the share',
    );
    return leases.slice(0, want);
  }

  async function acquire(): Promise<void> {
    let leases: ShardLease[];
    try {
      leases = await balanceOnce();
    } catch (err) {
      if (isConflict(err)) return becomeDisplaced(err);
      if (!failing) logger.warn({ err }, 'could not renew lease shards; retrying');
      failing = true;
      return;
    }
    if (failing) logger.info('lease shards renewed again');
    failing = false;
    if (displaced) logger.warn({ ownerId }, 'this id is ours again: taking lease shards');
    displaced = false;
    if (stopped) return;
    const next = new Set(leases.map((l) => l.shard));
    const gained = [...next].filter((s) => !heldIds.has(s)).sort((a, b) => a - b);
    const lost = [...heldIds].filter((s) => !next.has(s)).sort((a, b) => a - b);
    current = leases;
    heldIds = next;
    if (gained.length === 0 && lost.length === 0) return;
    logger.info(
      { ownerId, held: next.size, gained: gained.length, lost: lost.length, live, share },
      'lease shards changed',
    );
    await notify({ gained, lost });
  }

  async function notify(change: ShardChange): Promise<void> {
    for (const listener of listeners) {
      try {
        await listener(change);
      } catch (err) {
        logger.error({ err }, 'a lease shard listener failed');
      }
    }
  }

  /**
   * Two processes under one id would both hold every shard (each renewal is "mine") and each believe
   * the other absent, so the store keeps one instance per id (`announceCoordinator`'s `instance`).
   * A live presence under this id is either a predecessor that died (it lapses within its TTL: this
   * start waits for that once) or another live process (refused). Random ids never meet one.
   */
  async function claimId(): Promise<void> {
    for (let waited = false; ; waited = true) {
      try {
        await announce();
        return;
      } catch (err) {
        if (!isConflict(err)) throw err;
        if (waited) {
          throw new RouseError(
            'conflict',
            `another live coordinator goes by the id "${ownerId}" (it renewed its presence while this one waited): give each coordinator its own --coordinator-id, or leave it out for a random one`,
            { coordinatorId: ownerId },
          );
        }
        const waitMs = Math.max(0, Number(err.details.expiresAt) - clock.now()) + TWIN_MARGIN_MS;
        logger.info(
          { ownerId, waitMs },
          'a coordinator with this id was live moments ago; waiting for its presence to lapse',
        );
        await new Promise<void>((resolve) => clock.setTimer(waitMs, resolve));
      }
    }
  }

  /** Another process took this id over (this one's presence had lapsed): hold nothing until it is gone. */
  async function becomeDisplaced(err: RouseError): Promise<void> {
    if (!displaced)
      logger.error(
        { err, ownerId },
        'another live coordinator goes by this id: holding no lease shards until it is gone',
      );
    displaced = true;
    const lost = [...heldIds].sort((a, b) => a - b);
    current = [];
    heldIds = new Set();
    if (lost.length > 0) await notify({ gained: [], lost });
  }

  function renew(): Promise<void> {
    inFlight ??= acquire().finally(() => {
      inFlight = null;
    });
    return inFlight;
  }

  function schedule(): void {
    if (stopped) return;
    timer = clock.setTimer(renewIntervalMs, () => {
      timer = null;
      void renew().finally(schedule);
    });
  }

  return {
    ownerId,
    held: () => ({ ids: [...heldIds].sort((a, b) => a - b), count: shardCount }),
    leases: () => current,
    balance: () => ({ live, share }),
    othersListening: () => othersListening,
    async start() {
      await claimId();
      announced = true;
      await renew();
      schedule();
    },
    async stop() {
      stopped = true;
      timer?.cancel();
      timer = null;
      await inFlight;
      heldIds = new Set();
      current = [];
      // Refused or displaced: what goes by this id in the store is the other process's.
      if (!announced || displaced) return;
      try {
        await store.releaseShardLeases(ownerId);
      } catch (err) {
        logger.warn({ err }, 'could not release lease shards; they lapse after their TTL');
      }
    },
    renew,
    onChange(listener) {
      listeners.push(listener);
    },
  };
}
