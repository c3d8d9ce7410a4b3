/**
 * The live event stream (`GET /v1/events`): in-process publish/subscribe of `StreamEvent`s.
 * A listener that throws is logged and never breaks the publisher or the other listeners.
 */
import type { StreamEvent, Task, TaskEvent } from '@rouse/protocol';
import type { Logger } from 'pino';

export interface EventBus {
  subscribe(listener: (event: StreamEvent) => void): () => void;
  publish(event: StreamEvent): void;
  /** One `task.transition` per history entry. Cheap when nobody listens. */
  publishTransition(task: Task, events: readonly TaskEvent[]): void;
  /** True when at least one listener is subscribed (lets callers skip building events). */
  readonly active: boolean;
}

export function createEventBus(logger: Logger): EventBus {
  const listeners = new Set<(event: StreamEvent) => void>();
  const publish = (event: StreamEvent): void => {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (err) {
        logger.warn({ err, eventType: event.type }, 'event listener threw; ignored');
      }
    }
  };
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    publish,
    publishTransition(task, events) {
      if (listeners.size === 0) return;
      for (const event of events) publish({ type: 'task.transition', at: event.at, task, event });
    },
    get active() {
      return listeners.size > 0;
    },
  };
}
