/**
 * Store outages (issue 3). Every store call goes through `monitorStore`, which turns connection-level
 * failures into `unavailable` (so the API answers 503, never 500) and tells `StoreHealth`. An
 * `unavailable` that a ping confirms starts an outage (one slow statement under load does not); from
 * then on a probe pings the store every `probeIntervalMs`, and
 * when it answers, the recovery hooks run (the lease expiry re-arms every lease with a restart grace:
 * agents could not heartbeat while the store was away) before the store counts as up again. Lease
 * timers do not act while the store is down.
 */
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../core/clock.js';
import { RouseError, UnavailableError } from '../core/errors.js';
import type { Store } from '../store/store.js';

export interface StoreHealth {
  /** False from the first `unavailable` until the probe succeeded and the recovery hooks ran. */
  readonly up: boolean;
  /** Store-clock time the last outage ended (null: none yet). */
  readonly recoveredAt: number | null;
  /** Outages so far (for stats). */
  readonly outages: number;
  /** Note a failed store call: an `unavailable` one starts an outage. */
  observe(err: unknown): void;
  /** Run `hook` (awaited) when the store is back, before it counts as up. */
  onRecovered(hook: (outageMs: number) => Promise<void>): void;
  stop(): void;
}

/** Error codes of a connection that failed or broke (Node sockets, PostgreSQL SQLSTATE classes). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);
/** 08: connection exception; 57P01-57P03: admin shutdown, crash shutdown, cannot connect now; 53300: too many connections. */
const PG_UNAVAILABLE = /^(08|57P0[123]|53300)/;
const CONNECTION_MESSAGES =
  /connection terminated|connection timeout|timeout exceeded when trying to connect|server closed the connection|Client has encountered a connection error|Connection terminated unexpectedly/i;

/** The error a store failure stands for: known errors unchanged, broken connections `unavailable`. */
export function storeError(err: unknown): unknown {
  if (err instanceof RouseError) return err;
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : String(err);
  if (NETWORK_CODES.has(code) || PG_UNAVAILABLE.test(code) || CONNECTION_MESSAGES.test(message)) {
    return new UnavailableError('the store is unreachable; retry shortly', {
      cause: message,
      ...(code ? { code } : {}),
    });
  }
  return err;
}

const isUnavailable = (err: unknown): boolean => err instanceof RouseError && err.code === 'unavailable';

export interface StoreHealthDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  probeIntervalMs: number;
}

export function createStoreHealth(deps: StoreHealthDeps): StoreHealth {
  const { store, clock, logger, probeIntervalMs } = deps;
  const hooks: ((outageMs: number) => Promise<void>)[] = [];
  let up = true;
  let downSince = 0;
  let recoveredAt: number | null = null;
  let outages = 0;
  let probe: TimerHandle | null = null;
  let stopped = false;
  let confirming = false;

  function goDown(err: unknown): void {
    if (!up || stopped) return;
    up = false;
    outages++;
    downSince = clock.now();
    logger.warn({ err }, 'the store is unavailable: answering 503 and holding lease expiry until it is back');
    schedule();
  }

  function schedule(): void {
    if (stopped) return;
    probe = clock.setTimer(probeIntervalMs, () => {
      probe = null;
      void check();
    });
  }

  async function check(): Promise<void> {
    try {
      await store.ping();
      const outageMs = clock.now() - downSince;
      for (const hook of hooks) await hook(outageMs);
    } catch (err) {
      logger.debug({ err }, 'the store is still unavailable');
      schedule();
      return;
    }
    up = true;
    recoveredAt = clock.now();
    logger.warn({ outageMs: recoveredAt - downSince }, 'the store is reachable again; leases got a grace');
  }

  return {
    get up() {
      return up;
    },
    get recoveredAt() {
      return recoveredAt;
    },
    get outages() {
      return outages;
    },
    observe(err) {
      if (!up || stopped || confirming || !isUnavailable(err)) return;
      confirming = true;
      store.ping().then(
        () => {
          confirming = false;
        },
        () => {
          confirming = false;
          goDown(err);
        },
      );
    },
    onRecovered(hook) {
      hooks.push(hook);
    },
    stop() {
      stopped = true;
      probe?.cancel();
      probe = null;
    },
  };
}

/**
 * The store as the services see it: each call's failure goes through `storeError` and is reported to
 * `health`. Everything else passes through unchanged.
 */
export function monitorStore(store: Store, health: Pick<StoreHealth, 'observe'>): Store {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || prop === 'onClaimable') return value;
      let fn = wrapped.get(prop);
      if (fn === undefined) {
        const original = value as (...args: unknown[]) => unknown;
        fn = (...args: unknown[]): unknown => {
          let result: unknown;
          try {
            result = original.apply(target, args);
          } catch (err) {
            const mapped = storeError(err);
            health.observe(mapped);
            throw mapped;
          }
          if (result instanceof Promise) {
            return result.catch((err: unknown) => {
              const mapped = storeError(err);
              health.observe(mapped);
              throw mapped;
            });
          }
          return result;
        };
        wrapped.set(prop, fn);
      }
      return fn;
    },
  });
}
