/**
 * The derived agent status (docs/design.md §6.1): what the agent reports of itself, overruled by its
 * lifecycle and by the conditions the detectors hold open. Precedence, highest first:
 * `left > terminated > lost > terminating > stalled > error > at_risk > running > idle`.
 */
import type { AgentStatus, ConditionKind, ReportedAgentStatus } from '@rouse/protocol';

/** Where an agent slot's current incarnation is: watched, gone by itself, or ended by the watchdog. */
export const AGENT_LIFECYCLES = ['active', 'left', 'terminated'] as const;
export type AgentLifecycle = (typeof AGENT_LIFECYCLES)[number];

/** The conditions that make an agent `at_risk` (when nothing ranks higher). */
export const AT_RISK_CONDITIONS: readonly ConditionKind[] = [
  'dependency_down',
  'resource_runaway',
  'error_persisting',
];

export interface AgentStatusInput {
  lifecycle: AgentLifecycle;
  reportedStatus: ReportedAgentStatus;
  /** The kinds of the agent's open conditions (duplicates and order do not matter). */
  openConditions: readonly ConditionKind[];
}

/**
 * The status the coordinator shows for an agent. `lost` ⇐ `heartbeat_timeout`; `stalled` ⇐
 * `progress_stalled`; `at_risk` ⇐ `dependency_down`, `resource_runaway` or `error_persisting`. An
 * agent that reports `error` is `error` (which outranks `at_risk`, so `error_persisting` with a
 * reported error still shows `error`).
 */
export function deriveAgentStatus(input: AgentStatusInput): AgentStatus {
  const { lifecycle, reportedStatus, openConditions } = input;
  if (lifecycle === 'left') return 'left';
  if (lifecycle === 'terminated') return 'terminated';
  if (openConditions.includes('heartbeat_timeout')) return 'lost';
  if (reportedStatus === 'terminating') return 'terminating';
  if (openConditions.includes('progress_stalled')) return 'stalled';
  if (reportedStatus === 'error') return 'error';
  if (openConditions.some((c) => AT_RISK_CONDITIONS.includes(c))) return 'at_risk';
  return reportedStatus === 'running' ? 'running' : 'idle';
}

/**
 * The condition that decides a derived status, when a condition does: `heartbeat_timeout` for
 * `lost`, `progress_stalled` for `stalled`, the first of `AT_RISK_CONDITIONS` held open for
 * `at_risk`; null for the statuses that come from the lifecycle or the agent's own report.
 */
export function decidingCondition(
  status: AgentStatus,
  openConditions: readonly ConditionKind[],
): ConditionKind | null {
  switch (status) {
    case 'lost':
      return 'heartbeat_timeout';
    case 'stalled':
      return 'progress_stalled';
    case 'at_risk':
      return AT_RISK_CONDITIONS.find((c) => openConditions.includes(c)) ?? null;
    default:
      return null;
  }
}
