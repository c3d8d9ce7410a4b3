/**
 * The store's clock, read locally (docs/design.md §3: with PostgreSQL the database's `now()` decides
 * leases). The coordinator's own clock may be off by seconds or minutes; this clock estimates
 * `offset = storeNow − localNow` from `store.now()` samples (the midpoint of each round trip, the
 * sample with the shortest round trip winning) and answers `now() = localNow + offset`. Timers are
 * relative delays on the local clock, so a timer armed for a store-clock deadline fires at
 * `deadline − offset` local time.
 *
 * Nothing here decides an expiry: the store's conditional write does, by its own clock. A wrong
 * estimate can only make a timer fire early (the write is a no-op and the lease is re-armed) or late
 * (the shard owner's sweep, which asks the store for overdue leases, catches it).
 */
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { Store } from '../store/store.js';

/** Samples kept; the one with the shortest round trip gives the offset. */
const WINDOW = 8;
/** Samples taken back to back by `sync()` at start. */
const START_SAMPLES = 3;
/** An offset this large is worth a warning: somebody's clock is wrong. */
const WARN_OFFSET_MS = 1000;

export interface StoreClock extends Clock {
  /** Current estimate of `storeNow − localNow` (0 until the first sample, and when sync is off). */
  readonly offsetMs: number;
  /** Sample the store's clock now (a few times at start); failures keep the last estimate. */
  sync(samples?: number): Promise<void>;
  /** First sync, then one sample every `syncIntervalMs`. */
  start(): Promise<void>;
  stop(): void;
}

export interface StoreClockDeps {
  local: Clock;
  store: Store;
  logger: Logger;
  /** null: the store uses the local clock itself (SQLite); the offset stays 0 and nothing is sampled. */
  syncIntervalMs: number | null;
}

interface Sample {
  offsetMs: number;
  rttMs: number;
}

export function createStoreClock(deps: StoreClockDeps): StoreClock {
  const { local, store, logger, syncIntervalMs } = deps;
  const samples: Sample[] = [];
  let offsetMs = 0;
  let timer: TimerHandle | null = null;
  let stopped = false;
  let warned = false;

  async function sample(): Promise<void> {
    const t0 = local.now();
    const storeNow = await store.now();
    const t1 = local.now();
    samples.push({ offsetMs: storeNow - (t0 + t1) / 2, rttMs: t1 - t0 });
    if (samples.length > WINDOW) samples.shift();
    let best = samples[0]!;
    for (const s of samples) if (s.rttMs < best.rttMs) best = s;
    offsetMs = Math.round(best.offsetMs);
    if (Math.abs(offsetMs) >= WARN_OFFSET_MS && !warned) {
      warned = true;
      logger.warn(
        { offsetMs },
        "this coordinator's clock is off the store's; lease timers follow the store's clock",
      );
    }
  }

  async function sync(n = 1): Promise<void> {
    if (syncIntervalMs === null) return;
    try {
      for (let i = 0; i < n; i++) await sample();
    } catch (err) {
      logger.debug({ err }, 'could not sample the store clock; keeping the last offset');
    }
  }

  function schedule(): void {
    if (stopped || syncIntervalMs === null) return;
    timer = local.setTimer(syncIntervalMs, () => {
      void sync().finally(schedule);
    });
  }

  return {
    get offsetMs() {
      return offsetMs;
    },
    now: () => local.now() + offsetMs,
    setTimer: (delayMs, fn) => local.setTimer(delayMs, fn),
    sync,
    async start() {
      await sync(START_SAMPLES);
      schedule();
    },
    stop() {
      stopped = true;
      timer?.cancel();
      timer = null;
    },
  };
}

/** A clock `offsetMs` off `base` (tests and `--clock-offset-ms`: a coordinator with a wrong clock). */
export function skewedClock(base: Clock, offsetMs: number): Clock {
  if (offsetMs === 0) return base;
  return { now: () => base.now() + offsetMs, setTimer: (d, fn) => base.setTimer(d, fn) };
}
