/** The `agent.condition` stream event of a stored condition: `opened`, or `closed` with when and why. */
import type { StreamEvent } from '@rouse/protocol';
import type { ConditionRecord } from '../../store/store.js';

export function conditionEvent(c: ConditionRecord, at: number): StreamEvent {
  const { condition, since, taskId, evidence } = c;
  return {
    type: 'agent.condition',
    at,
    agentId: c.agentId,
    agentType: c.agentType,
    state: c.closedAt === null ? 'opened' : 'closed',
    condition: { condition, since, taskId, evidence },
    closedAt: c.closedAt,
    closeReason: c.closeReason,
  };
}
