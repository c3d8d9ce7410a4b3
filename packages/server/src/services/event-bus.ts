/**
 * The live event stream (`GET /v1/events`): in-process publish/subscribe of `StreamEvent`s.
 * A listener that throws is logged and never breaks the publisher or the other listeners.
 *
 * Listeners that subscribe with `{ everyCoordinator: true }` (the event stream's clients) also get the
 * transitions other coordinators of the store made (`publishRemote`, fed by the event relay); the
 * others (metrics) hear this coordinator's own events only.
 */
import type { StreamEvent, Task, TaskEvent } from '@rouse/protocol';
import type { Logger } from 'pino';

export interface SubscribeOptions {
  /** Also hear transitions made by the other coordinators of the store. @default false */
  everyCoordinator?: boolean;
}

export interface EventBus {
  subscribe(listener: (event: StreamEvent) => void, options?: SubscribeOptions): () => void;
  /** An event another coordinator made: to `everyCoordinator` listeners only. */
  publishRemote(event: StreamEvent): void;
  /** How many `everyCoordinator` listeners there are. */
  readonly everyCoordinatorListeners: number;
  /** Called when `everyCoordinatorListeners` changes. */
  onListenersChanged(fn: () => void): void;
  publish(event: StreamEvent): void;
  /** One `task.transition` per history entry. Cheap when nobody listens. */
  publishTransition(task: Task, events: readonly TaskEvent[]): void;
  /** True when at least one listener is subscribed (lets callers skip building events). */
  readonly active: boolean;
}

export function createEventBus(logger: Logger): EventBus {
  const listeners = new Set<(event: StreamEvent) => void>();
  const everywhere = new Set<(event: StreamEvent) => void>();
  const changed: (() => void)[] = [];
  const deliver = (to: Set<(event: StreamEvent) => void>, event: StreamEvent): void => {
    for (const listener of to) {
      try {
        listener(event);
      } catch (err) {
        logger.warn({ err, eventType: event.type }, 'event listener threw; ignored');
      }
    }
  };
  const publish = (event: StreamEvent): void => deliver(listeners, event);
  return {
    subscribe(listener, options = {}) {
      // A function object of its own, so the same listener may subscribe twice.
      const own = (event: StreamEvent) => listener(event);
      listeners.add(own);
      if (options.everyCoordinator === true) {
        everywhere.add(own);
        for (const fn of changed) fn();
      }
      return () => {
        listeners.delete(own);
        if (everywhere.delete(own)) for (const fn of changed) fn();
      };
    },
    publish,
    publishRemote(event) {
      deliver(everywhere, event);
    },
    get everyCoordinatorListeners() {
      return everywhere.size;
    },
    onListenersChanged(fn) {
      changed.push(fn);
    },
    publishTransition(task, events) {
      if (listeners.size === 0) return;
      for (const event of events) publish({ type: 'task.transition', at: event.at, task, event });
    },
    get active() {
      return listeners.size > 0;
    },
  };
}
