/**
 * Agent leases (docs/design.md §6.1): an agent is `lost` (condition `heartbeat_timeout`) the moment its
 * lease — its last heartbeat plus timeout factor × interval — runs out, not a scan later.
 *
 * The owner of each agent's lease shard watches it, whichever coordinator its heartbeats reached:
 * every `sweepMs` it asks the store for the agents of its shards whose lease ends within
 * `lookaheadMs` and arms an exact timer for each; a timer that fires makes the conditional write that
 * marks the agent lost (the store checks the lease really passed, by its own clock, so an agent that
 * heartbeat meanwhile — through any coordinator — stays as it is). Healthy agents, whose leases lie
 * further ahead than the lookahead, cost nothing but the sweep's one indexed query.
 *
 * After this coordinator starts, or the store comes back from an outage, leases get a grace of one
 * full lease before they can run out: agents could not reach anyone in the meantime. While the store
 * is down nothing is marked.
 */
import type { JsonObject } from '@rouse/protocol';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../../core/clock.js';
import type { AgentLeaseEntry, ConditionRecord, MarkLostInput, Store } from '../../store/store.js';
import { LeaseTimers } from '../lease-timers.js';
import type { ShardSet } from '../shard-manager.js';

/** Timers fire this much after a deadline, so the store's clock agrees it has passed. */
const CLOCK_MARGIN_MS = 2;

export interface AgentLeasesDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  sweepMs: number;
  lookaheadMs: number;
  shards: () => ShardSet;
  health: { readonly up: boolean };
  actor: string;
  /** An agent was marked lost here. */
  onLost: (record: ConditionRecord) => void;
}

export interface AgentLeases {
  start(): void;
  stop(): void;
  /** Leases seen from now on get a grace of one full lease from now (a start, an outage). */
  disrupted(): void;
  /** Run the lookahead now (it also runs every `sweepMs`). */
  sweep(): Promise<void>;
  /** Mark agents lost now, each only if the store agrees (the adaptive rule, tests). */
  markLost(inputs: MarkLostInput[]): Promise<(ConditionRecord | null)[]>;
  readonly armed: number;
  idle(): Promise<void>;
}

export function createAgentLeases(deps: AgentLeasesDeps): AgentLeases {
  const { store, clock, logger } = deps;
  /** Agents whose lease timer is armed here, with what the sweep saw. */
  const seen = new Map<string, AgentLeaseEntry>();
  const pending = new Set<Promise<void>>();
  let graceFrom = Number.NEGATIVE_INFINITY;
  let timer: TimerHandle | null = null;
  let stopped = true;
  let due: { agentId: string; incarnation: number }[] = [];
  let flushing = false;

  const timers = new LeaseTimers(clock, (lease) => {
    due.push({ agentId: lease.taskId, incarnation: lease.version });
    if (!flushing) {
      flushing = true;
      // Every lease due in this turn goes to the store in one write.
      queueMicrotask(() => {
        flushing = false;
        const batch = due;
        due = [];
        track(expire(batch));
      });
    }
  });

  function track(p: Promise<void>): void {
    const q = p.finally(() => pending.delete(q));
    pending.add(q);
  }

  function evidence(e: AgentLeaseEntry, now: number): JsonObject {
    return {
      lastHeartbeatAt: e.lastHeartbeatAt,
      startedAt: e.startedAt,
      expectedIntervalMs: e.heartbeatIntervalMs,
      timeoutMs: e.heartbeatTimeoutMs,
      leaseExpiresAt: e.leaseExpiresAt,
      gapMs: now - (e.lastHeartbeatAt ?? e.startedAt),
      neverHeartbeat: e.lastHeartbeatAt === null,
    };
  }

  async function expire(batch: { agentId: string; incarnation: number }[]): Promise<void> {
    if (stopped || !deps.health.up) return;
    const now = clock.now();
    const inputs: MarkLostInput[] = [];
    for (const b of batch) {
      const e = seen.get(b.agentId);
      seen.delete(b.agentId);
      if (e === undefined || e.incarnation !== b.incarnation) continue;
      inputs.push({
        agentId: e.agentId,
        incarnation: e.incarnation,
        evidence: evidence(e, now),
        openedBy: deps.actor,
      });
    }
    if (inputs.length === 0) return;
    try {
      await markLost(inputs);
    } catch (err) {
      const down = (err as { code?: unknown }).code === 'unavailable';
      logger[down ? 'debug' : 'error'](
        { err, agents: inputs.length },
        'could not mark agents lost; the next sweep retries',
      );
    }
  }

  async function markLost(inputs: MarkLostInput[]): Promise<(ConditionRecord | null)[]> {
    const results = await store.markAgentsLost(inputs);
    for (const r of results) {
      if (r === null) continue;
      logger.warn({ agentId: r.agentId, incarnation: r.incarnation, evidence: r.evidence }, 'agent lost');
      deps.onLost(r);
    }
    return results;
  }

  async function sweep(): Promise<void> {
    const shards = deps.shards();
    if (stopped || !deps.health.up || shards.ids.length === 0) return;
    const dueBy = (await store.now()) + deps.lookaheadMs;
    const leases = await store.dueAgentLeases({ dueBy, shards });
    // Armed here but no longer due: it heartbeat (through any coordinator), left or was replaced.
    const listed = new Set(leases.map((e) => e.agentId));
    for (const id of seen.keys()) {
      if (listed.has(id)) continue;
      seen.delete(id);
      timers.untrack(id);
    }
    for (const e of leases) {
      // After a start or an outage, a full lease from then (agents could not reach anyone before).
      // A few ms past the deadline: the store's clock, not this estimate of it, decides.
      const at = Math.max(e.leaseExpiresAt, graceFrom + e.heartbeatTimeoutMs) + CLOCK_MARGIN_MS;
      const known = seen.get(e.agentId);
      if (
        known !== undefined &&
        known.incarnation === e.incarnation &&
        known.leaseExpiresAt === e.leaseExpiresAt
      ) {
        continue;
      }
      seen.set(e.agentId, e);
      timers.untrack(e.agentId);
      timers.track(e.agentId, e.incarnation, at);
    }
  }

  function schedule(): void {
    if (stopped) return;
    timer = clock.setTimer(deps.sweepMs, () => {
      track(
        sweep()
          .catch((err: unknown) => {
            const down = (err as { code?: unknown }).code === 'unavailable';
            logger[down ? 'debug' : 'error']({ err }, 'agent lease sweep failed');
          })
          .finally(schedule),
      );
    });
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      graceFrom = clock.now();
      track(sweep().catch((err: unknown) => logger.warn({ err }, 'agent lease sweep failed')));
      schedule();
    },
    stop() {
      stopped = true;
      timer?.cancel();
      timer = null;
      timers.stop();
      seen.clear();
    },
    disrupted() {
      graceFrom = clock.now();
      // Re-arm what is armed with the grace at the next sweep.
      seen.clear();
    },
    sweep,
    markLost,
    get armed() {
      return timers.size;
    },
    async idle() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
  };
}
