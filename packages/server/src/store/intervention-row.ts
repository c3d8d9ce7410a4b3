/** The `interventions` row, the same columns in both backends, and its mapping to the wire type. */
import type {
  Intervention,
  InterventionAction,
  InterventionState,
  InterventionTrigger,
  JsonObject,
} from '@rouse/protocol';

export const INTERVENTION_COLUMNS =
  'seq, id, agent_id, incarnation, task_id, condition, action, rung, attempt, state, reason, evidence, actor, ' +
  'command_id, coordinator_id, shard_epoch, started_at, ended_at';

/** A row with its evidence parsed. `task_id` is '' when the intervention is about no task. */
export interface InterventionRow {
  seq: number;
  id: string;
  agent_id: string;
  incarnation: number;
  task_id: string;
  condition: InterventionTrigger;
  action: InterventionAction;
  rung: number | null;
  attempt: number;
  state: InterventionState;
  reason: string;
  evidence: JsonObject;
  actor: string;
  command_id: string | null;
  coordinator_id: string | null;
  shard_epoch: number | null;
  started_at: number;
  ended_at: number | null;
}

export function toIntervention(r: InterventionRow): Intervention {
  return {
    id: r.id,
    agentId: r.agent_id,
    incarnation: Number(r.incarnation),
    taskId: r.task_id === '' ? null : r.task_id,
    condition: r.condition,
    action: r.action,
    rung: r.rung === null ? null : Number(r.rung),
    attempt: Number(r.attempt),
    state: r.state,
    reason: r.reason,
    evidence: r.evidence,
    actor: r.actor,
    commandId: r.command_id,
    coordinatorId: r.coordinator_id,
    shardEpoch: r.shard_epoch === null ? null : Number(r.shard_epoch),
    startedAt: Number(r.started_at),
    endedAt: r.ended_at === null ? null : Number(r.ended_at),
  };
}
