/**
 * An agent's derived status (DESIGN.md §6.1): what it reports of itself, overruled by what the
 * watchdog concluded. Precedence, highest first: left > terminated > lost > terminating > stalled >
 * error > at_risk > running > idle.
 */
import type { AgentStatus, ConditionKind, ReportedAgentStatus } from '@rouse/protocol';

export interface StatusInputs {
  lifecycle: 'active' | 'left' | 'terminated';
  reportedStatus: ReportedAgentStatus;
  /** The kinds of its open conditions (repeats allowed). */
  openConditions: readonly ConditionKind[];
}

/** Conditions that make an agent `at_risk` (when nothing ranks higher). */
const AT_RISK: readonly ConditionKind[] = ['dependency_down', 'resource_runaway', 'error_persisting'];

export function deriveAgentStatus(s: StatusInputs): AgentStatus {
  if (s.lifecycle === 'left') return 'left';
  if (s.lifecycle === 'terminated') return 'terminated';
  if (s.openConditions.includes('heartbeat_timeout')) return 'lost';
  if (s.reportedStatus === 'terminating') return 'terminating';
  if (s.openConditions.includes('progress_stalled')) return 'stalled';
  if (s.reportedStatus === 'error') return 'error';
  if (s.openConditions.some((c) => AT_RISK.includes(c))) return 'at_risk';
  return s.reportedStatus;
}
