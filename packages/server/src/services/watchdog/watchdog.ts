/**
 * The watchdog's services (docs/design.md §6), assembled: the detectors after heartbeats and on their
 * timers (`agent-watchdog.ts`), agent leases (`agent-leases.ts`), per-type baselines
 * (`baselines.ts`), the events they publish (`agent-events.ts`) and the recovery ladder that acts on
 * the conditions they open (`ladder.ts`).
 */
import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.js';
import type { Store, Transitioned } from '../../store/store.js';
import type { AgentCommands } from '../agent-commands.js';
import type { DependencyRegistry } from '../dependency-registry.js';
import type { EventBus } from '../event-bus.js';
import type { EventRelay } from '../event-relay.js';
import type { PolicyProvider } from '../policy-registry.js';
import type { ShardSet } from '../shard-manager.js';
import type { WriteBatcher } from '../write-batcher.js';
import { type AgentEvents, createAgentEvents } from './agent-events.js';
import { type AgentLeases, createAgentLeases } from './agent-leases.js';
import { type AgentWatchdog, createAgentWatchdog } from './agent-watchdog.js';
import { type Baselines, createBaselines } from './baselines.js';
import type { Interventions } from './interventions.js';
import { createLadder, type Ladder } from './ladder.js';
import type { LadderAlerts } from './ladder-alerts.js';

export interface Watchdog {
  readonly agents: AgentWatchdog;
  readonly leases: AgentLeases;
  readonly baselines: Baselines;
  readonly events: AgentEvents;
  readonly ladder: Ladder;
  start(): void;
  stop(): Promise<void>;
  /** Resolves when no timer-driven watchdog work is in flight. */
  idle(): Promise<void>;
}

export interface WatchdogDeps {
  store: Store;
  clock: Clock;
  logger: (component: string) => Logger;
  writes: WriteBatcher;
  dependencies: DependencyRegistry;
  policies: PolicyProvider;
  bus: EventBus;
  eventRelay: EventRelay;
  shards: () => ShardSet;
  /** This coordinator's epoch of a lease shard it holds (null: not held). */
  shardEpoch: (shard: number) => number | null;
  health: { readonly up: boolean };
  commands: AgentCommands;
  interventions: Interventions;
  alerts: LadderAlerts;
  applyTransition: (t: Transitioned) => void;
  /** End an agent the ladder terminated. */
  terminated: (agentId: string, reason: string) => Promise<void>;
  ladderSweepMs: number;
  coordinatorId: string;
  agentLeaseSweepMs: number;
  agentLeaseLookaheadMs: number;
  baselineFlushMs: number;
  /** An agent was lost: forget what this coordinator keeps of it. */
  onLost: (agentId: string) => void;
}

export function createWatchdog(deps: WatchdogDeps): Watchdog {
  const actor = `coordinator:${deps.coordinatorId}`;
  const ladder = createLadder({
    store: deps.store,
    clock: deps.clock,
    logger: deps.logger('ladder'),
    commands: deps.commands,
    interventions: deps.interventions,
    alerts: deps.alerts,
    policyFor: (type) => deps.policies.current().forAgentType(type),
    shards: deps.shards,
    shardEpoch: deps.shardEpoch,
    coordinatorId: deps.coordinatorId,
    applyTransition: deps.applyTransition,
    terminated: deps.terminated,
    sweepMs: deps.ladderSweepMs,
  });
  const published = createAgentEvents(deps);
  // Every condition opened or closed here is news for the agent's ladder.
  const events: AgentEvents = {
    ...published,
    condition(record) {
      published.condition(record);
      ladder.poke(record.agentId);
      // Out of the condition: out of its alert too (resolved when its last agent leaves it).
      if (record.closedAt !== null) void deps.alerts.clear(record.agentId, record.condition);
    },
    get remembered() {
      return published.remembered;
    },
  };
  const baselines = createBaselines({
    store: deps.store,
    clock: deps.clock,
    logger: deps.logger('baselines'),
    coordinatorId: () => deps.coordinatorId,
    flushMs: deps.baselineFlushMs,
  });
  const leases = createAgentLeases({
    store: deps.store,
    clock: deps.clock,
    logger: deps.logger('agent-leases'),
    sweepMs: deps.agentLeaseSweepMs,
    lookaheadMs: deps.agentLeaseLookaheadMs,
    shards: deps.shards,
    health: deps.health,
    actor,
    onLost(record) {
      events.condition(record);
      deps.onLost(record.agentId);
      agents.forget(record.agentId);
      void events
        .status(record.agentId, 'lost')
        .catch((err: unknown) => deps.logger('agent-leases').debug({ err }, 'could not publish a status'))
        .finally(() => events.forget(record.agentId));
    },
  });
  const agents = createAgentWatchdog({
    store: deps.store,
    clock: deps.clock,
    logger: deps.logger('watchdog'),
    writes: deps.writes,
    dependencies: deps.dependencies,
    policyFor: (type) => deps.policies.current().forAgentType(type),
    baselines,
    events,
    actor,
  });
  return {
    agents,
    leases,
    baselines,
    events,
    ladder,
    start() {
      leases.start();
      baselines.start();
      ladder.start();
    },
    async stop() {
      leases.stop();
      agents.stop();
      ladder.stop();
      await baselines.stop();
    },
    async idle() {
      await Promise.all([leases.idle(), agents.idle()]);
      await ladder.idle();
    },
  };
}
