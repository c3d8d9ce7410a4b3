/**
 * Long-poll claim waiters. A claim that finds no work registers here for its task types and sleeps
 * until work may have appeared: a task created or requeued now (`notify`), a task whose `runAt` or
 * backoff ends later (`notifyAt`, one armed timer for the earliest), or everything at once
 * (`notifyAll`, e.g. a dependency recovered). Its own deadline and abort signal end the wait too.
 *
 * Waiters are woken in FIFO order per type, and only as many as the new work needs (by their `max`),
 * so a new task does not stampede every idle agent. `epochOf(types)` grows on every notification
 * for those types: a claimer reads it before querying the store and skips the wait when it moved, so
 * no wake-up is lost between "found nothing" and "registered".
 *
 * Issue 3 (several coordinators) feeds `notify` from PostgreSQL LISTEN/NOTIFY; the interface stays.
 */
import type { Clock, TimerHandle } from '../core/clock.js';
import { type HeapItem, MinHeap } from './min-heap.js';

export type WaitResult = 'woken' | 'timeout' | 'aborted' | 'stopped';

/** What publishers of new work call. */
export interface ClaimWakeups {
  /** `count` tasks of `type` became claimable now. */
  notify(type: string, count?: number): void;
  /** A task of `type` becomes claimable at `at`. */
  notifyAt(type: string, at: number): void;
  /** Wake every waiter (something changed for all types). */
  notifyAll(): void;
}

export interface ClaimWaiters extends ClaimWakeups {
  /** Grows on every notification that concerns any of `types`. */
  epochOf(types: readonly string[]): number;
  /** Sleep until woken for one of `types`, `until` passes, `signal` aborts, or `stop()`. */
  wait(input: {
    agentId: string;
    types: readonly string[];
    max: number;
    until: number;
    signal?: AbortSignal | undefined;
  }): Promise<WaitResult>;
  /** End the waits of one agent (it left). */
  releaseAgent(agentId: string): void;
  /** Agents waiting for `type` right now. */
  waitingAgents(type: string): Set<string>;
  readonly waiting: number;
  /** Resolve every wait with `stopped` and refuse new ones. */
  stop(): void;
}

interface Waiter {
  agentId: string;
  types: readonly string[];
  max: number;
  done: boolean;
  finish(result: WaitResult): void;
}

interface Scheduled extends HeapItem {
  type: string;
}

export function createClaimWaiters(clock: Clock): ClaimWaiters {
  const byType = new Map<string, Set<Waiter>>();
  const all = new Set<Waiter>();
  const scheduled = new MinHeap<Scheduled>();
  let seq = 0;
  /** Notifications per type, and for all types at once. */
  const epochs = new Map<string, number>();
  let allEpoch = 0;
  let stopped = false;
  let timer: TimerHandle | null = null;
  let armedAt: number | null = null;

  function remove(w: Waiter): void {
    all.delete(w);
    for (const t of w.types) {
      const set = byType.get(t);
      if (set === undefined) continue;
      set.delete(w);
      if (set.size === 0) byType.delete(t);
    }
  }

  function notify(type: string, count = 1): void {
    epochs.set(type, (epochs.get(type) ?? 0) + 1);
    const set = byType.get(type);
    if (set === undefined) return;
    let capacity = 0;
    for (const w of set) {
      if (capacity >= count) break;
      capacity += w.max;
      w.finish('woken');
    }
  }

  function arm(): void {
    const top = scheduled.peek();
    if (top === undefined || stopped || (armedAt !== null && armedAt <= top.at)) return;
    timer?.cancel();
    armedAt = top.at;
    timer = clock.setTimer(top.at - clock.now(), fire);
  }

  function fire(): void {
    timer = null;
    armedAt = null;
    const now = clock.now();
    const due = new Map<string, number>();
    for (let top = scheduled.peek(); top !== undefined && top.at <= now; top = scheduled.peek()) {
      scheduled.pop();
      due.set(top.type, (due.get(top.type) ?? 0) + 1);
    }
    arm();
    for (const [type, count] of due) notify(type, count);
  }

  return {
    epochOf(types) {
      let e = allEpoch;
      for (const t of types) e += epochs.get(t) ?? 0;
      return e;
    },
    get waiting() {
      return all.size;
    },
    notify,
    notifyAt(type, at) {
      if (stopped) return;
      if (at <= clock.now()) {
        notify(type, 1);
        return;
      }
      scheduled.push({ at, seq: ++seq, type });
      arm();
    },
    notifyAll() {
      allEpoch++;
      for (const w of [...all]) w.finish('woken');
    },
    wait({ agentId, types, max, until, signal }) {
      if (stopped) return Promise.resolve('stopped');
      if (signal?.aborted) return Promise.resolve('aborted');
      return new Promise<WaitResult>((resolve) => {
        let deadline: TimerHandle | null = null;
        const onAbort = (): void => w.finish('aborted');
        const w: Waiter = {
          agentId,
          types,
          max,
          done: false,
          finish(result) {
            if (w.done) return;
            w.done = true;
            remove(w);
            deadline?.cancel();
            signal?.removeEventListener('abort', onAbort);
            resolve(result);
          },
        };
        all.add(w);
        for (const t of types) {
          const set = byType.get(t);
          if (set === undefined) byType.set(t, new Set([w]));
          else set.add(w);
        }
        signal?.addEventListener('abort', onAbort, { once: true });
        deadline = clock.setTimer(until - clock.now(), () => w.finish('timeout'));
      });
    },
    releaseAgent(agentId) {
      for (const w of [...all]) if (w.agentId === agentId) w.finish('stopped');
    },
    waitingAgents(type) {
      const out = new Set<string>();
      for (const w of byType.get(type) ?? []) out.add(w.agentId);
      return out;
    },
    stop() {
      stopped = true;
      timer?.cancel();
      timer = null;
      armedAt = null;
      scheduled.clear();
      for (const w of [...all]) w.finish('stopped');
    },
  };
}
