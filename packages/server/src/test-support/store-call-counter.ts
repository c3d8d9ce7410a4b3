/**
 * Counts the calls a coordinator makes to some of its store's methods, and the most of them in flight
 * at once: what the tests of bounded concurrency assert. Each counted call waits a turn before it
 * runs, as a pooled query would, so that calls started together overlap. With `on` false, calls pass
 * straight through, uncounted.
 */
import type { Store } from '../store/store.js';

export interface StoreCallCounter {
  /** Counting on (the default) or off. */
  on: boolean;
  /** Calls counted since the start or the last {@link StoreCallCounter.reset}. */
  readonly calls: number;
  /** The most counted calls in flight at once, over the same span. */
  readonly most: number;
  /** Count from zero again. */
  reset(): void;
  /** A view of `store` whose calls to the counted methods are counted here. */
  wrap(store: Store): Store;
}

export function storeCallCounter(methods: readonly (keyof Store)[]): StoreCallCounter {
  const counted = new Set<PropertyKey>(methods);
  let calls = 0;
  let most = 0;
  let inFlight = 0;
  const counter: StoreCallCounter = {
    on: true,
    get calls() {
      return calls;
    },
    get most() {
      return most;
    },
    reset() {
      calls = 0;
      most = 0;
    },
    wrap(store) {
      return new Proxy(store, {
        get(target, prop, receiver) {
          const value: unknown = Reflect.get(target, prop, receiver);
          if (!counted.has(prop) || typeof value !== 'function') return value;
          return async (...args: unknown[]) => {
            if (!counter.on) return value.apply(target, args);
            calls++;
            most = Math.max(most, ++inFlight);
            try {
              await new Promise<void>((r) => setImmediate(r));
              return await value.apply(target, args);
            } finally {
              inFlight--;
            }
          };
        },
      });
    },
  };
  return counter;
}
