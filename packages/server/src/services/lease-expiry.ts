/**
 * Acting on lease deadlines (docs/design.md §3, §5). When a tracked lease passes, the store's conditional
 * `expireLease` turns the task `timeout` (and schedules its retry) in one write; an early or duplicate
 * call changes nothing, so we re-read and re-arm when the lease turns out to have been renewed.
 * A lease in its write-back grace completes from the uploaded result when there is one.
 *
 * After a restart, loaded leases get a grace (one heartbeat timeout by default) that lives only in
 * memory: the timer fires later than the stored deadline, and a heartbeat inside the grace renews as
 * usual. A periodic sweep of overdue leases is the safety net for anything the timers missed.
 *
 * Several coordinators (issue 3): each keeps exact timers for the leases it granted or renewed; the
 * owner of a lease shard also sweeps that shard's overdue leases, by the store's clock, so the leases
 * of a coordinator that died are expired by a survivor within the shard lease TTL plus one sweep.
 * Leases loaded at start, in shards gained soon after a disruption, and after a store outage get the
 * restart grace: agents could not heartbeat while their coordinator or the store was away. While the
 * store is down, nothing is expired.
 */
import type { Logger } from 'pino';
import type { ResolvedBackoffOptions } from '../core/backoff.js';
import type { Clock, TimerHandle } from '../core/clock.js';
import { HELD_STATUSES } from '../core/transitions.js';
import { shardOf } from '../store/lease-shards.js';
import type { LeaseEntry, Store, Transitioned } from '../store/store.js';
import { type DueLease, LeaseTimers, type LeaseTracker } from './lease-timers.js';
import type { ShardSet } from './shard-manager.js';
import type { StoreHealth } from './store-health.js';

/** Retry delay when the store was not ready to expire a lease we think is due (clock skew, outage). */
const RECHECK_DELAY_MS = 100;
const STORE_ERROR_RETRY_MS = 1000;
/** While the store is down, due leases wait this long before looking again. */
const STORE_DOWN_RECHECK_MS = 500;

export interface LeaseExpiryDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  backoff: ResolvedBackoffOptions;
  sweepIntervalMs: number;
  /** null: each lease's own `heartbeatTimeoutMs`. */
  restartGraceMs: number | null;
  /** Side effects of a transition made here (events, wake-ups, untracking). */
  onTransition: (t: Transitioned) => void;
  /** The lease shards this coordinator owns: the sweep looks at these only. */
  shards: () => ShardSet;
  /** Timers and the sweep hold off while the store is down. */
  health: Pick<StoreHealth, 'up'>;
}

export interface LeaseExpiry {
  readonly tracker: LeaseTracker;
  /** Load active leases with the restart grace, then start the safety sweep. */
  start(): Promise<void>;
  stop(): void;
  /** Run the safety sweep once (also runs every `sweepIntervalMs`). */
  sweep(): Promise<void>;
  /** Resolves when no expiry work is in flight. */
  idle(): Promise<void>;
  /**
   * Arm the leases of `shards` with the restart grace (shards gained right after a start or an
   * outage). With `alsoTracked`, leases already watched get it too (after a store outage).
   */
  loadWithGrace(shards: ShardSet, alsoTracked?: boolean): Promise<number>;
}

export function createLeaseExpiry(deps: LeaseExpiryDeps): LeaseExpiry {
  const { store, clock, logger } = deps;
  const inFlight = new Set<string>();
  const pending = new Set<Promise<void>>();
  let sweepTimer: TimerHandle | null = null;
  let stopped = false;

  const timers = new LeaseTimers(clock, (lease) => handle(lease));

  function handle(lease: DueLease): void {
    if (stopped || inFlight.has(lease.taskId)) return;
    inFlight.add(lease.taskId);
    const p = act(lease).finally(() => {
      inFlight.delete(lease.taskId);
      pending.delete(p);
    });
    pending.add(p);
  }

  async function act(lease: DueLease): Promise<void> {
    const { taskId, version } = lease;
    if (!deps.health.up) {
      // The store is away: agents cannot renew either. Look again later; the recovery re-arms with a grace.
      if (!stopped && timers.get(taskId) === undefined) {
        timers.track(taskId, version, clock.now() + STORE_DOWN_RECHECK_MS, lease.writeBack);
      }
      return;
    }
    try {
      if (lease.writeBack && (await completeFromUpload(lease))) return;
      const expired = await store.expireLease({ taskId, version, backoff: deps.backoff });
      if (expired !== null) {
        logger.info(
          { taskId, version, reason: expired.reason, nextAttemptAt: expired.task.nextAttemptAt },
          'lease expired',
        );
        deps.onTransition(expired);
        return;
      }
      await rearm(taskId);
    } catch (err) {
      const down = (err as { code?: unknown }).code === 'unavailable';
      logger[down ? 'debug' : 'error']({ err, taskId, version }, 'lease expiry failed; retrying');
      if (!stopped && timers.get(taskId) === undefined) {
        timers.track(taskId, version, clock.now() + STORE_ERROR_RETRY_MS, lease.writeBack);
      }
    }
  }

  async function completeFromUpload(lease: DueLease): Promise<boolean> {
    const task = await store.getTask(lease.taskId);
    if (
      task === null ||
      task.version !== lease.version ||
      task.status !== 'running' ||
      !task.executionDone ||
      task.resultRef === null ||
      (task.leaseExpiresAt ?? 0) > clock.now()
    ) {
      return false;
    }
    const done = await store.completeFromResultRef({ taskId: lease.taskId, version: lease.version });
    if (done === null) return false;
    logger.info(
      { taskId: lease.taskId, version: lease.version },
      'completed from the uploaded result after the write-back grace',
    );
    deps.onTransition(done);
    return true;
  }

  /** Nothing was due in the store: the lease was renewed, moved on or ended. Watch it again if held. */
  async function rearm(taskId: string): Promise<void> {
    const task = await store.getTask(taskId);
    if (task === null || !HELD_STATUSES.includes(task.status) || task.leaseExpiresAt === null) return;
    const tracked = timers.get(taskId);
    if (tracked !== undefined && tracked.version >= task.version) return; // a newer write re-armed it
    const now = clock.now();
    const at = task.leaseExpiresAt > now ? task.leaseExpiresAt : now + RECHECK_DELAY_MS;
    timers.track(taskId, task.version, at, task.executionDone);
  }

  async function sweep(): Promise<void> {
    const shards = deps.shards();
    if (!deps.health.up || shards.ids.length === 0) return;
    // Overdue by the store's own clock: a skewed local clock cannot hide a lease from the sweep.
    const now = await store.now();
    const overdue = await store.activeLeases({ dueBy: now, shards });
    for (const l of overdue) {
      if (l.leaseExpiresAt > now || inFlight.has(l.taskId)) continue;
      const tracked = timers.get(l.taskId);
      // A later deadline in memory (restart grace, or a renewal the store has not seen) wins.
      if (tracked !== undefined && (tracked.version > l.version || tracked.leaseExpiresAt > now)) continue;
      timers.untrack(l.taskId);
      // Untracked here: granted by another coordinator (several coordinators), or missed by the timers.
      logger[tracked === undefined ? 'info' : 'warn'](
        { taskId: l.taskId, version: l.version },
        'the sweep found an overdue lease',
      );
      handle({
        taskId: l.taskId,
        version: l.version,
        leaseExpiresAt: l.leaseExpiresAt,
        writeBack: l.executionDone,
      });
    }
  }

  function scheduleSweep(): void {
    if (stopped) return;
    sweepTimer = clock.setTimer(deps.sweepIntervalMs, () => {
      const p = sweep()
        .catch((err: unknown) =>
          logger[(err as { code?: unknown }).code === 'unavailable' ? 'debug' : 'error'](
            { err },
            'lease sweep failed',
          ),
        )
        .finally(() => {
          pending.delete(p);
          scheduleSweep();
        });
      pending.add(p);
    });
  }

  async function graceOf(l: LeaseEntry): Promise<number> {
    const grace = deps.restartGraceMs ?? l.heartbeatTimeoutMs;
    if (typeof grace === 'number') return grace;
    return (await store.getTask(l.taskId))?.timing.heartbeatTimeoutMs ?? 0;
  }

  async function loadWithGrace(shards: ShardSet, alsoTracked = false): Promise<number> {
    if (shards.ids.length === 0 && !alsoTracked) return 0;
    const owned = new Set(shards.ids);
    const leases = await store.activeLeases(alsoTracked ? {} : { shards });
    const now = clock.now();
    let armed = 0;
    for (const l of leases) {
      if (alsoTracked && !owned.has(shardOf(l.taskId, shards.count)) && timers.get(l.taskId) === undefined)
        continue;
      const grace = await graceOf(l);
      timers.track(l.taskId, l.version, Math.max(l.leaseExpiresAt, now + grace), l.executionDone);
      armed++;
    }
    return armed;
  }

  return {
    tracker: timers,
    loadWithGrace,
    async start() {
      const armed = await loadWithGrace(deps.shards());
      logger[armed > 0 ? 'info' : 'debug']({ leases: armed }, 'lease timers armed');
      scheduleSweep();
    },
    stop() {
      stopped = true;
      sweepTimer?.cancel();
      sweepTimer = null;
      timers.stop();
    },
    sweep,
    async idle() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
  };
}
