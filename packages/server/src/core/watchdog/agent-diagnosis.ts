/**
 * The agent diagnosis (`GET /v1/agents/{id}/diagnosis`): why an agent is in its status, from the
 * agent as the API shows it, its policy and `now`. One reason per open condition, plus the plain
 * states (`left`, `terminated`, `terminating`, `reported_error`, `never_heartbeat`,
 * `in_quiet_period`, `healthy`), ordered by the status precedence so that `reasons[0]` is the one
 * that decides the derived status and drives the one-sentence summary. Pure; text lives in
 * `agent-diagnosis-text.ts`.
 */
import type {
  Agent,
  AgentCondition,
  AgentDiagnosis,
  AgentDiagnosisCode,
  AgentDiagnosisReason,
  Intervention,
  JsonObject,
} from '@rouse/protocol';
import type { ResolvedPolicy } from '../policies/resolved-policy.js';
import { agentMessageFor, agentSuggestionsFor } from './agent-diagnosis-text.js';
import { agentRecovery } from './agent-recovery.js';
import { agentHeartbeatTimeoutMs } from './phi.js';

export interface AgentDiagnosisInput {
  agent: Agent;
  now: number;
  /** The policy that applies to the agent (`policySet.forAgentType(agent.agentType)`). */
  policy: ResolvedPolicy;
  /** Its interventions, newest first (the recent ones are enough). */
  interventions?: readonly Intervention[];
}

/** Where each reason goes, highest first (the status precedence; see AGENT_STATUSES). */
const RANK: Record<AgentDiagnosisCode, number> = {
  left: 0,
  terminated: 1,
  heartbeat_timeout: 2,
  terminating: 3,
  progress_stalled: 4,
  reported_error: 5,
  dependency_down: 6,
  resource_runaway: 7,
  error_persisting: 8,
  never_heartbeat: 9,
  in_quiet_period: 10,
  healthy: 11,
};

export function diagnoseAgent(input: AgentDiagnosisInput): AgentDiagnosis {
  const { agent, now } = input;
  const reasons = reasonsFor(input).map((r) => ({
    ...r,
    message: agentMessageFor(agent, r.code, r.details),
  }));
  const more =
    reasons.length > 1 ? ` (${reasons.length - 1} more reason${reasons.length > 2 ? 's' : ''} below)` : '';
  const who = agent.name === agent.id ? agent.id : `${agent.name} (${agent.id})`;
  const summary = `Agent ${who} is ${agent.status}: ${reasons[0]?.message ?? 'no reason found'}${more}.`;
  const recovery = agentRecovery(agent, input.policy, input.interventions ?? [], now);
  const suggestions = [...new Set(reasons.flatMap((r) => agentSuggestionsFor(agent, r.code, r.details)))];
  if (recovery.state === 'exhausted') {
    suggestions.unshift(
      `see what was tried: rouse interventions --agent ${agent.id}; then act: rouse restart ${agent.id} or rouse terminate ${agent.id}`,
    );
  }
  return { agentId: agent.id, status: agent.status, summary, reasons, suggestions, recovery, at: now };
}

function reasonsFor(input: AgentDiagnosisInput): AgentDiagnosisReason[] {
  const { agent, now, policy } = input;
  const ended = {
    endedAt: agent.endedAt,
    incarnation: agent.incarnation,
    lastHeartbeatAt: agent.lastHeartbeatAt,
  };
  if (agent.status === 'left') return [reason('left', agent.endedAt, ended)];
  if (agent.status === 'terminated') return [reason('terminated', agent.endedAt, ended)];

  const out = agent.conditions.map((c) => conditionReason(input, c));
  if (agent.reportedStatus === 'error') {
    // error_persisting, when open, says it all (and ranks as the error itself: see rankOf).
    if (!out.some((r) => r.code === 'error_persisting')) {
      out.push(
        reason('reported_error', null, {
          message: agent.statusMessage,
          errorTimeoutMs: policy.errorTimeoutMs,
        }),
      );
    }
  }
  if (agent.reportedStatus === 'terminating') out.push(reason('terminating', null, {}));
  const lost = out.some((r) => r.code === 'heartbeat_timeout');
  if (agent.lastHeartbeatAt === null && !lost) {
    const deadline = agent.startedAt + policy.startupTimeoutMs;
    out.push(
      reason('never_heartbeat', agent.startedAt, {
        registeredAt: agent.startedAt,
        startupTimeoutMs: policy.startupTimeoutMs,
        deadline,
        inMs: deadline - now,
      }),
    );
  }
  const quietEnd = agent.startedAt + policy.quietPeriodMs;
  if (now < quietEnd) {
    out.push(
      reason('in_quiet_period', agent.startedAt, {
        startedAt: agent.startedAt,
        quietPeriodMs: policy.quietPeriodMs,
        until: quietEnd,
        inMs: quietEnd - now,
      }),
    );
  }
  if (out.length === 0) {
    out.push(
      reason('healthy', agent.lastHeartbeatAt, {
        reportedStatus: agent.reportedStatus,
        lastHeartbeatAt: agent.lastHeartbeatAt,
        sinceLastMs: agent.lastHeartbeatAt === null ? null : now - agent.lastHeartbeatAt,
        heartbeatIntervalMs: agent.heartbeatIntervalMs,
        leaseExpiresAt: agent.leaseExpiresAt,
        currentTaskIds: agent.currentTaskIds,
      }),
    );
  }
  // A stable sort: conditions of one kind keep their order (oldest first, as the agent lists them),
  // except that the agent's own stall comes before its tasks'.
  return out
    .map((r, i) => ({ r, i }))
    .sort((a, b) => rankOf(agent, a.r) - rankOf(agent, b.r) || taskLast(a.r) - taskLast(b.r) || a.i - b.i)
    .map(({ r }) => r);
}

/** A reason from an open condition: its evidence, with what has changed since it opened. */
function conditionReason(input: AgentDiagnosisInput, c: AgentCondition): AgentDiagnosisReason {
  const { agent, now, policy } = input;
  const details: JsonObject = { ...c.evidence, taskId: c.taskId, openedAt: c.since };
  switch (c.condition) {
    case 'heartbeat_timeout': {
      const last = agent.lastHeartbeatAt;
      const evidenceTimeout = c.evidence.timeoutMs;
      details.lastHeartbeatAt = last;
      details.silentForMs = now - (last ?? agent.startedAt);
      details.timeoutMs =
        last === null
          ? policy.startupTimeoutMs
          : typeof evidenceTimeout === 'number'
            ? evidenceTimeout
            : agentHeartbeatTimeoutMs(policy.heartbeat);
      details.registeredAt = agent.startedAt;
      details.host = agent.host;
      details.pid = agent.pid;
      details.supervisorId = agent.supervisorId;
      break;
    }
    case 'progress_stalled':
      if (typeof c.evidence.unchangedSinceAt === 'number') {
        details.unchangedForMs = now - c.evidence.unchangedSinceAt;
      }
      break;
    case 'error_persisting':
      details.message = agent.statusMessage ?? c.evidence.message ?? null;
      if (typeof c.evidence.since === 'number') details.forMs = now - c.evidence.since;
      break;
    default:
      break;
  }
  return reason(c.condition, c.since, details);
}

/** An agent that reports error is `error` (above `at_risk`): its error_persisting ranks as the error. */
function rankOf(agent: Agent, r: AgentDiagnosisReason): number {
  return r.code === 'error_persisting' && agent.reportedStatus === 'error'
    ? RANK.reported_error
    : RANK[r.code];
}

function taskLast(r: AgentDiagnosisReason): number {
  return r.code === 'progress_stalled' && r.details.taskId !== null && r.details.taskId !== undefined ? 1 : 0;
}

function reason(code: AgentDiagnosisCode, since: number | null, details: JsonObject): AgentDiagnosisReason {
  return { code, message: '', since, details };
}
