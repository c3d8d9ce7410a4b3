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
 * - Alone, nothing is published: while no other coordinator is live (`othersLive`, from the last
 *   renewal of the lease shards) and none was heard from in the last `settleMs`, a notice would only
 *   come back as our own echo — on PostgreSQL a `NOTIFY` and its delivery per burst of creates, a
 *   quarter of the coordinator's work when tasks come one at a time.
 * - A coordinator that starts says so at once (a notice naming no type), so that the others publish
 *   again without waiting for their next renewal to see it. Should that notice be lost, its
 *   long-polls would miss the others' notices until then; so, once, `settleMs` after its start (past
 *   two renewals), it wakes every local long-poll, which looks at the store again.
 */
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../core/clock.js';
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
  clock: Clock;
  /** Whether another coordinator may be listening (at the last shard renewal). @default always */
  othersLive?: () => boolean;
  /** How long after `start()` the others surely know of this coordinator. @default 0 (no wake-up) */
  settleMs?: number;
}): ClaimableRelay {
  const { store, waiters: local, origin, logger, clock } = deps;
  const settleMs = deps.settleMs ?? 0;
  /** When another coordinator's notice last came (clock ms). */
  let heardAt = Number.NEGATIVE_INFINITY;
  const othersLive = deps.othersLive ?? (() => true);
  const othersListen = (): boolean => othersLive() || clock.now() - heardAt < settleMs;
  let settle: TimerHandle | null = null;
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
  const enqueue = (type: string): void => {
    if (othersListen()) outbox.add(type);
  };

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
        heardAt = clock.now();
        if (notice.types.length === 0) return; // a coordinator that started
        stats.received++;
        for (const type of notice.types) local.notify(type, Number.MAX_SAFE_INTEGER);
      });
      if (settleMs > 0) {
        store
          .publishClaimable({ types: [], origin })
          .catch((err: unknown) =>
            logger.warn({ err }, 'could not tell the other coordinators this one started'),
          );
        settle = clock.setTimer(settleMs, () => {
          settle = null;
          local.notifyAll();
        });
      }
    },
    stop() {
      stopped = true;
      settle?.cancel();
      settle = null;
      outbox.stop();
      unsubscribe?.();
      unsubscribe = null;
    },
  };
}
