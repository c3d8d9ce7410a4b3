/**
 * Wake-ups across coordinators (docs/design.md §8: new work wakes long-polling claims through
 * `LISTEN/NOTIFY`). The services wake their own long-polls through `ClaimWakeups`; the relay wraps
 * those wake-ups so that every type that became claimable — now, or later after a backoff or
 * `runAt` — is also published to the other coordinators sharing the store, and turns their notices
 * into local wake-ups.
 *
 * - Coalesced: types are collected and published once per event-loop turn, with at most one publish
 *   in flight (the next one carries everything that piled up meanwhile), so 5,000 tasks a second are
 *   not 5,000 NOTIFYs.
 * - Future work: a requeue with a backoff is published at once too. The receiving coordinator wakes
 *   its long-polls for that type; each re-reads `nextClaimableAt` from the store and sleeps until then,
 *   so the wake-up does not depend on the publishing coordinator still being alive at that time.
 * - A remote notice carries no count, so it wakes every local long-poll of its types (each claims
 *   what it can and sleeps again). Own notices are ignored: they were woken locally. A store that
 *   carries `origin` says whose a notice is; for one that does not, a notice equal to one we
 *   published and have not heard back yet is taken as its echo (if it was in fact another
 *   coordinator's, our real echo then counts as theirs: the same wake-ups happen either way).
 */
import type { Logger } from 'pino';
import type { Store } from '../store/store.js';
import type { ClaimWaiters } from './claim-waiters.js';
import { createNoticeBatcher } from './notice-batcher.js';

const MAX_ECHOES = 256;

const noticeKey = (types: readonly string[]): string => [...types].sort().join('\u0000');

export interface ClaimableRelay {
  /** The waiters to give the services: local wake-ups, also published. */
  readonly waiters: ClaimWaiters;
  /** Listen for other coordinators' notices. */
  start(): void;
  /** Stop listening; what is pending is dropped. */
  stop(): void;
  /** Notices published and received (for stats). */
  readonly stats: { published: number; received: number };
}

export function createClaimableRelay(deps: {
  store: Store;
  waiters: ClaimWaiters;
  origin: string;
  logger: Logger;
}): ClaimableRelay {
  const { store, waiters: local, origin, logger } = deps;
  /** Keys of notices published and not heard back yet (bounded: an echo may never come). */
  const echoes: string[] = [];
  const stats = { published: 0, received: 0 };
  let stopped = false;
  let unsubscribe: (() => void) | null = null;
  const outbox = createNoticeBatcher<string>({
    unique: true,
    publish(types) {
      stats.published++;
      echoes.push(noticeKey(types));
      if (echoes.length > MAX_ECHOES) echoes.shift();
      return store.publishClaimable({ types, origin });
    },
    // Other coordinators still find the work on their next poll; nothing is lost.
    onFailure: (err, types) => logger.warn({ err, types }, 'could not publish a claimable notice'),
  });
  const enqueue = (type: string): void => outbox.add(type);

  const waiters: ClaimWaiters = {
    epochOf: (types) => local.epochOf(types),
    wait: (input) => local.wait(input),
    releaseAgent: (agentId) => local.releaseAgent(agentId),
    waitingAgents: (type) => local.waitingAgents(type),
    get waiting() {
      return local.waiting;
    },
    stop: () => local.stop(),
    notify(type, count) {
      local.notify(type, count);
      enqueue(type);
    },
    notifyAt(type, at) {
      local.notifyAt(type, at);
      enqueue(type);
    },
    notifyAll() {
      // Local news (a dependency this coordinator tracks recovered): others learn it themselves.
      local.notifyAll();
    },
  };

  return {
    waiters,
    stats,
    start() {
      if (unsubscribe !== null || stopped) return;
      unsubscribe = store.onClaimable((notice) => {
        if (notice.origin !== undefined) {
          if (notice.origin === origin) return;
        } else {
          const i = echoes.indexOf(noticeKey(notice.types));
          if (i >= 0) {
            echoes.splice(i, 1);
            return;
          }
        }
        stats.received++;
        for (const type of notice.types) local.notify(type, Number.MAX_SAFE_INTEGER);
      });
    },
    stop() {
      stopped = true;
      outbox.stop();
      unsubscribe?.();
      unsubscribe = null;
    },
  };
}
