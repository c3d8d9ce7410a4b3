/**
 * The watchdog's part of the live event stream: `agent.condition` for every condition opened or
 * closed here, and `agent.status` when an agent's derived status changes — both relayed to the other
 * coordinators' streams. The last status seen of each agent is remembered to publish changes only;
 * the memory is pruned when an agent is lost, leaves or is replaced.
 */
import type { AgentStatus } from '@rouse/protocol';
import type { Clock } from '../../core/clock.js';
import type { ConditionRecord, Store } from '../../store/store.js';
import type { EventBus } from '../event-bus.js';
import type { EventRelay } from '../event-relay.js';
import { conditionEvent } from './condition-event.js';

export interface AgentEvents {
  /** Publish a condition that was opened or closed (by this coordinator). */
  condition(record: ConditionRecord): void;
  /** The agent's derived status is now `status`: publish `agent.status` when it changed. */
  status(agentId: string, status: AgentStatus): Promise<void>;
  /** Remember the agent's status without publishing it (its registration says it). */
  remember(agentId: string, status: AgentStatus): void;
  /** Forget what was remembered of the agent. */
  forget(agentId: string): void;
  readonly remembered: number;
}

export function createAgentEvents(ctx: {
  store: Store;
  bus: EventBus;
  eventRelay: EventRelay;
  clock: Clock;
}): AgentEvents {
  const statuses = new Map<string, AgentStatus>();
  return {
    condition(record) {
      ctx.eventRelay.relayCondition(record.seq);
      if (!ctx.bus.active) return;
      ctx.bus.publish(conditionEvent(record, record.closedAt ?? ctx.clock.now()));
    },
    async status(agentId, status) {
      if (statuses.get(agentId) === status) return;
      statuses.set(agentId, status);
      ctx.eventRelay.relayAgent(agentId, 'status');
      if (!ctx.bus.active) return;
      const agent = await ctx.store.getAgent(agentId);
      if (agent !== null) ctx.bus.publish({ type: 'agent.status', at: ctx.clock.now(), agent });
    },
    remember(agentId, status) {
      statuses.set(agentId, status);
    },
    forget(agentId) {
      statuses.delete(agentId);
    },
    get remembered() {
      return statuses.size;
    },
  };
}
