/**
 * Store outages (issue 3). Every store call goes through `monitorStore`, which turns connection-level
 * failures into `unavailable` (so the API answers 503, never 500) and tells `StoreHealth`. An
 * `unavailable` that a ping confirms starts an outage (one slow statement under load does not); from
 * then on a probe pings the store every `probeIntervalMs`, and
 * when it answers, the recovery hooks run (the lease expiry re-arms every lease with a restart grace:
 * agents could not heartbeat while the store was away) before the store counts as up again. Lease
 * timers do not act while the store is down. While an outage is confirmed, store calls are refused at
 * once (`refusal`) instead of each waiting out a connect timeout: the API answers 503 immediately,
 * `/readyz` included, and requests do not pile up behind a dead pool; only the probe and the
 * recovery hooks reach the store.
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
  /**
   * During a confirmed outage (outside the recovery hooks): the error a store call answers at once,
   * without reaching the store. Null otherwise.
   */
  refusal(): UnavailableError | null;
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
  let recovering = false;

  /** `failedAt`: when the call that started the outage failed (its ping confirmed it later). */
  function goDown(err: unknown, failedAt: number): void {
    if (!up || stopped) return;
    up = false;
    outages++;
    downSince = failedAt;
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
      recovering = true;
      for (const hook of hooks) await hook(outageMs);
    } catch (err) {
      logger.debug({ err }, 'the store is still unavailable');
      schedule();
      return;
    } finally {
      recovering = false;
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
      const failedAt = clock.now();
      store.ping().then(
        () => {
          confirming = false;
        },
        () => {
          confirming = false;
          goDown(err, failedAt);
        },
      );
    },
    refusal() {
      if (up || recovering || stopped) return null;
      const downForMs = clock.now() - downSince;
      return new UnavailableError(
        `the store has been unreachable for ${(downForMs / 1000).toFixed(1)} s; retry shortly`,
        { downForMs },
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

/** Store methods that return no promise, or must run in an outage too: never refused. */
const NEVER_REFUSED = new Set<PropertyKey>(['onClaimable', 'onStreamNotices', 'createBlobStore', 'close']);

/**
 * The store as the services see it: each call's failure goes through `storeError` and is reported to
 * `health`; during a confirmed outage, calls are refused at once with `health.refusal()`. Everything
 * else passes through unchanged.
 */
export function monitorStore(store: Store, health: Pick<StoreHealth, 'observe' | 'refusal'>): Store {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || prop === 'onClaimable') return value;
      let fn = wrapped.get(prop);
      if (fn === undefined) {
        const original = value as (...args: unknown[]) => unknown;
        const refusable = !NEVER_REFUSED.has(prop);
        fn = (...args: unknown[]): unknown => {
          const refused = refusable ? health.refusal() : null;
          if (refused) return Promise.reject(refused);
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
