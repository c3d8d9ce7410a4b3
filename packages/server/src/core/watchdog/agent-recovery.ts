/**
 * Where the recovery ladder stands for one agent, for its diagnosis: from its open conditions, its
 * policy's rungs and its recent interventions. Pure.
 */
import type { Agent, AgentRecovery, Intervention } from '@rouse/protocol';
import { type ResolvedPolicy, rungMatches } from '../policies/resolved-policy.js';

const OPEN = new Set(['pending', 'held']);
const RECENT_ENDED = 5;

const describe = (i: Intervention): string =>
  `${i.action}${i.rung === null ? '' : ` (rung ${i.rung + 1}, attempt ${i.attempt})`} for ${i.condition}${i.taskId === null ? '' : ` of task ${i.taskId}`}`;

/** `interventions`: the agent's, newest first (its recent history is enough). */
export function agentRecovery(
  agent: Agent,
  policy: ResolvedPolicy,
  interventions: readonly Intervention[],
  now: number,
): AgentRecovery {
  const open = interventions.filter((i) => OPEN.has(i.state));
  const recent = [...open, ...interventions.filter((i) => !OPEN.has(i.state)).slice(0, RECENT_ENDED)];
  const result = (state: AgentRecovery['state'], message: string): AgentRecovery => ({
    state,
    message,
    interventions: recent,
  });
  const held = open.find((i) => i.state === 'held');
  if (held) return result('held', `${describe(held)} is held while a dependency the agent needs is down`);
  const acting = open[0];
  if (acting) return result('acting', `${describe(acting)} is under way`);
  if (agent.status === 'left' || agent.status === 'terminated' || agent.conditions.length === 0) {
    return result('idle', 'nothing to recover');
  }
  for (const c of agent.conditions) {
    const failed = interventions.find(
      (i) => i.condition === 'recovery_failed' && i.taskId === c.taskId && i.startedAt >= c.since,
    );
    const tried = interventions.some((i) => i.condition === c.condition && i.startedAt >= c.since);
    if (failed || (tried && !policy.recoveryActions.some((r) => rungMatches(r, 'recovery_failed')))) {
      return result(
        'exhausted',
        `the recovery ladder ran out for ${c.condition}: the agent is left for a person`,
      );
    }
  }
  const unanswered = agent.conditions.find(
    (c) => !policy.recoveryActions.some((r) => rungMatches(r, c.condition)),
  );
  if (
    unanswered &&
    agent.conditions.every((c) => !policy.recoveryActions.some((r) => rungMatches(r, c.condition)))
  ) {
    return result('none', `no rung of policy ${policy.name} answers ${unanswered.condition}`);
  }
  const waiting = agent.conditions.find((c) => now < c.since + policy.forMs);
  if (waiting) {
    return result(
      'waiting',
      `the ladder acts once ${waiting.condition} has held for ${policy.forMs} ms (for)`,
    );
  }
  return result('acting', 'the next rung starts at the next ladder step');
}
