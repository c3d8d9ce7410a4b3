/**
 * Lease shards held by this coordinator (DESIGN.md §6 "Leases for coordinators", §8). Lease expiry is
 * split into `LEASE_SHARD_COUNT` shards; each is held by one coordinator under a renewable lease in
 * the store. Every `renewIntervalMs` (a third of the TTL) this coordinator renews what it holds and
 * takes every free or lapsed shard, all by the store's clock. The owner of a shard sweeps that shard's
 * overdue leases; a coordinator that dies stops renewing, and the survivors take its shards within
 * one TTL plus one renewal.
 *
 * Policy: take everything free. The first coordinator holds every shard and the others hold none
 * until it stops (it releases them) or dies; then whoever renews first takes them. Balance is not
 * needed for correctness: each coordinator also keeps exact timers for the leases it granted or
 * renewed, the owner only sweeps, and every expiry is a conditional write, so a double action is
 * harmless. On SQLite the one coordinator holds every shard through the same path.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../core/clock.js';
import { LEASE_SHARD_COUNT } from '../store/lease-shards.js';
import type { ShardLease, Store } from '../store/store.js';

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
  /** First acquisition (awaited), then one renewal every `renewIntervalMs`. */
  start(): Promise<void>;
  /** Stop renewing and release every shard so the survivors take them at once. */
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
}

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
  let heldIds = new Set<number>();
  let timer: TimerHandle | null = null;
  let stopped = false;
  let failing = false;
  let inFlight: Promise<void> | null = null;

  async function acquire(): Promise<void> {
    let leases: ShardLease[];
    try {
      leases = await store.acquireShardLeases({ ownerId, shardCount, want: shardCount, ttlMs });
    } catch (err) {
      if (!failing) logger.warn({ err }, 'could not renew lease shards; retrying');
      failing = true;
      return;
    }
    if (failing) logger.info('lease shards renewed again');
    failing = false;
    if (stopped) return;
    const next = new Set(leases.map((l) => l.shard));
    const gained = [...next].filter((s) => !heldIds.has(s)).sort((a, b) => a - b);
    const lost = [...heldIds].filter((s) => !next.has(s)).sort((a, b) => a - b);
    current = leases;
    heldIds = next;
    if (gained.length === 0 && lost.length === 0) return;
    logger.info(
      { ownerId, held: next.size, gained: gained.length, lost: lost.length },
      'lease shards changed',
    );
    for (const listener of listeners) {
      try {
        await listener({ gained, lost });
      } catch (err) {
        logger.error({ err }, 'a lease shard listener failed');
      }
    }
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
    async start() {
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
