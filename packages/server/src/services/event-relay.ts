/**
 * The live event stream across coordinators (DESIGN.md §7: the dashboard is live through SSE; §8:
 * coordinators are stateless replicas behind any load balancer). A client of `GET /v1/events` on one
 * coordinator sees the transitions every coordinator of the store makes:
 *
 * - Each coordinator announces with its presence (every shard renewal) whether it has such clients.
 *   While another one has, it publishes the transitions it makes — task id and history seq only,
 *   coalesced per event-loop turn, one publish in flight at a time (PostgreSQL `NOTIFY`). While nobody
 *   listens it publishes nothing, so the hot path pays nothing for the feature.
 * - A coordinator with clients listens for those notices, reads the tasks and entries they name in
 *   one read per notice, in notice order, and hands them to its `everyCoordinator` listeners.
 *
 * So a new client hears the other coordinators' transitions within two shard renewals (its coordinator
 * announces it, then they read it: two thirds of the shard lease TTL). A notice lost while the database connection is down is a gap in a live
 * feed, not in state: every task and its whole history stay readable.
 */
import type { TaskEvent } from '@rouse/protocol';
import type { Logger } from 'pino';
import type { Store, TransitionNotice, TransitionRef } from '../store/store.js';
import type { EventBus } from './event-bus.js';

export interface EventRelay {
  /**
   * This coordinator wrote these history entries of `taskId` (a creation is entry 1): publish them
   * while another coordinator listens.
   */
  relay(taskId: string, entries: readonly Pick<TaskEvent, 'seq'>[]): void;
  start(): void;
  stop(): void;
  /** Notices published and received (for stats). */
  readonly stats: { published: number; received: number };
}

export function createEventRelay(deps: {
  store: Store;
  bus: EventBus;
  origin: string;
  /** Another live coordinator has clients on its event stream (as of the last shard renewal). */
  othersListening: () => boolean;
  logger: Logger;
}): EventRelay {
  const { store, bus, origin, logger } = deps;
  const stats = { published: 0, received: 0 };
  let pending: TransitionRef[] = [];
  let scheduled = false;
  let publishing = false;
  let stopped = true;
  let failing = false;
  let unsubscribe: (() => void) | null = null;
  /** Reads of received notices, chained so that their events go out in notice order. */
  let delivering: Promise<void> = Promise.resolve();

  function flush(): void {
    scheduled = false;
    if (stopped || pending.length === 0) return;
    const items = pending;
    pending = [];
    publishing = true;
    stats.published++;
    store
      .publishTransitions({ origin, items })
      .then(
        () => {
          failing = false;
        },
        (err: unknown) => {
          if (!failing) logger.warn({ err, transitions: items.length }, 'could not relay transitions');
          failing = true;
        },
      )
      .finally(() => {
        publishing = false;
        if (pending.length > 0 && !scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
  }

  function receive(notice: TransitionNotice): void {
    if (notice.origin === origin || bus.everyCoordinatorListeners === 0) return;
    stats.received++;
    delivering = delivering
      .then(async () => {
        for (const { task, event } of await store.readTransitions(notice.items)) {
          // Creation is its own kind of event in the stream, as on the coordinator that created it.
          if (event.from === null && event.to === 'created') {
            bus.publishRemote({ type: 'task.created', at: event.at, task });
          } else {
            bus.publishRemote({ type: 'task.transition', at: event.at, task, event });
          }
        }
      })
      .catch((err: unknown) => {
        logger.warn({ err, transitions: notice.items.length }, 'could not read relayed transitions');
      });
  }

  /** Listen for the others' notices exactly while this coordinator has clients. */
  function follow(): void {
    const wanted = !stopped && bus.everyCoordinatorListeners > 0;
    if (wanted && unsubscribe === null) unsubscribe = store.onTransitions(receive);
    else if (!wanted && unsubscribe !== null) {
      unsubscribe();
      unsubscribe = null;
    }
  }
  bus.onListenersChanged(follow);

  return {
    relay(taskId, entries) {
      if (stopped || entries.length === 0 || !deps.othersListening()) return;
      for (const e of entries) pending.push({ taskId, seq: e.seq });
      if (scheduled || publishing) return;
      scheduled = true;
      // A scheduling boundary (coalesce one event-loop turn), not domain time: no clock involved.
      setImmediate(flush);
    },
    start() {
      stopped = false;
      follow();
    },
    stop() {
      stopped = true;
      pending = [];
      follow();
    },
    stats,
  };
}
