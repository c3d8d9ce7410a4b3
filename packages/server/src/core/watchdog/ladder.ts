/**
 * The recovery ladder's rules (docs/design.md §6.4), pure: which rung an open condition starts next,
 * and whether an attempt under way succeeded, failed, waits or moves on. The service
 * (`services/watchdog/ladder.ts`) gathers the facts, writes the interventions and sends the commands.
 *
 * An open condition (once it has held for the policy's `for`) starts the first rung that listens for
 * it and whose budget — `max_attempts` within `window`, or since the condition opened and through the
 * hour before (`attemptsFrom`) — is not spent.
 * An attempt that fails or is skipped leaves the way open to the next choice by the same rule: the same
 * rung while it has attempts left, then the next one; one that succeeds settles the condition (an
 * alert delivered while an outage lasts: nothing more to do until it closes and opens again). When none is left the condition's ladder is
 * exhausted: `recovery_failed` starts the rungs that listen for it, the same way, once; then the agent
 * waits for a person. While a dependency the agent needs is down, rungs that cannot cure an outage
 * (restart, reassign, terminate) are held instead of spending their budget.
 */
import type { CommandOutcome, ConditionKind, Intervention, InterventionTrigger } from '@rouse/protocol';
import { type RecoveryAction, rungMatches } from '../policies/resolved-policy.js';

/** Rungs that cannot cure a dependency outage: held while one lasts. */
const HELD_DURING_OUTAGE = new Set<RecoveryAction['action']>([
  'snapshot_and_restart',
  'reassign',
  'terminate',
]);

/** How long `snapshot_and_restart` waits for the snapshot before restarting anyway (at most). */
export const CHECKPOINT_WAIT_MS = 10_000;

/**
 * Without a `window`, a rung's attempts count since its condition opened and, for a condition that
 * comes back, through the hour before: a program that stalls again right after each "successful"
 * restart climbs on down the ladder (to `terminate`, then `recovery_failed`) instead of starting over
 * at the first rung forever. `recovery_failed` itself is counted per episode: a person is told each
 * time the ladder runs out.
 */
export const RECURRENCE_WINDOW_MS = 3_600_000;

/** Where the attempts that count against an episode's rungs (without a `window`) begin. */
export function attemptsFrom(episode: Episode, now: number): number {
  return episode.trigger === 'recovery_failed'
    ? episode.since
    : Math.min(episode.since, now - RECURRENCE_WINDOW_MS);
}

/** One condition's run of the ladder: its kind (or `recovery_failed`), its task, when it opened. */
export interface Episode {
  trigger: ConditionKind | 'recovery_failed';
  taskId: string | null;
  since: number;
}

export type NextStep =
  /** Nothing before `at` (the condition has not held for `for` yet). */
  | { kind: 'wait'; at: number }
  | { kind: 'start'; rung: number; attempt: number; action: RecoveryAction; held: boolean }
  /** An attempt of this episode succeeded (an alert was delivered while the condition lasts): done. */
  | { kind: 'settled' }
  /** No rung listens or every budget is spent. */
  | { kind: 'exhausted' };

export interface NextStepInput {
  now: number;
  rungs: readonly RecoveryAction[];
  /** How long a condition must hold before the ladder acts. */
  forMs: number;
  episode: Episode;
  /** The agent's interventions (any order); those of other episodes are ignored. */
  history: readonly Intervention[];
  /** A dependency it needs is down or rate-limited. */
  outage: boolean;
  /** It holds a task a `reassign` could move (the episode's, or any for an agent-wide condition). */
  holdsTask: boolean;
}

/** Whether an intervention counts against its rung's budget: it acted (not held, then skipped). */
export function acted(i: Intervention): boolean {
  return i.state !== 'skipped' || typeof i.evidence.actedAt === 'number';
}

export function nextStep(input: NextStepInput): NextStep {
  const { now, episode } = input;
  if (episode.trigger !== 'recovery_failed' && now < episode.since + input.forMs) {
    return { kind: 'wait', at: episode.since + input.forMs };
  }
  const succeeded = input.history.some(
    (i) =>
      i.state === 'succeeded' &&
      i.condition === episode.trigger &&
      i.taskId === episode.taskId &&
      i.startedAt >= episode.since,
  );
  if (succeeded) return { kind: 'settled' };
  for (const [index, rung] of input.rungs.entries()) {
    if (!rungMatches(rung, episode.trigger)) continue;
    if (rung.action === 'reassign' && !input.holdsTask) continue;
    const from = rung.windowMs === null ? attemptsFrom(episode, now) : now - rung.windowMs;
    const spent = input.history.filter(
      (i) =>
        i.rung === index &&
        i.condition === episode.trigger &&
        i.taskId === episode.taskId &&
        i.startedAt >= from &&
        acted(i),
    ).length;
    if (spent >= rung.maxAttempts) continue;
    return {
      kind: 'start',
      rung: index,
      attempt: spent + 1,
      action: rung,
      held: input.outage && HELD_DURING_OUTAGE.has(rung.action),
    };
  }
  return { kind: 'exhausted' };
}

/** What the service knows now about an attempt under way. */
export interface AttemptFacts {
  now: number;
  /** The condition it answers is still open (for `recovery_failed`: the failed condition). */
  conditionOpen: boolean;
  outage: boolean;
  agent: {
    incarnation: number;
    startedAt: number;
    lastHeartbeatAt: number | null;
    /** It left or was terminated: nobody is left to act on. */
    ended: boolean;
  };
  /** The policy's quiet period (a restarted agent must stay well through it). */
  quietPeriodMs: number;
  /** For `reassign`: the tasks it took from the agent, as they are now (gone ones left out). */
  tasks?: readonly { agentId: string | null; status: string; final: boolean }[];
  /** For `alert`: how its delivery went. */
  alert?: 'delivered' | 'failed' | 'pending';
}

export type Verdict =
  | { kind: 'keep'; recheckAt: number | null }
  | { kind: 'end'; state: 'succeeded' | 'failed' | 'skipped'; reason: string }
  | { kind: 'hold' }
  /** Not acted on yet (opened, or held until now, or its coordinator stopped before acting): act now. */
  | { kind: 'act' }
  /** `snapshot_and_restart`: the snapshot is in (or waited for long enough): restart now. */
  | { kind: 'restart' };

/** An acknowledgement recorded in an intervention's evidence (`<command>Ack`). */
interface AckEvidence {
  outcome: CommandOutcome;
  message?: string | null;
}

const ackOf = (i: Intervention, command: string): AckEvidence | null => {
  const v = i.evidence[`${command}Ack`];
  return v !== null && typeof v === 'object' && !Array.isArray(v) && typeof v.outcome === 'string'
    ? (v as unknown as AckEvidence)
    : null;
};

const refused = (ack: AckEvidence | null): boolean => ack !== null && ack.outcome !== 'done';
const said = (ack: AckEvidence): string => (ack.message ? `: ${ack.message}` : '');
const numberOf = (i: Intervention, key: string): number | null =>
  typeof i.evidence[key] === 'number' ? (i.evidence[key] as number) : null;

/** Judge an open intervention of the ladder against its rung and the facts. */
export function judgeAttempt(i: Intervention, rung: RecoveryAction, f: AttemptFacts): Verdict {
  if (f.agent.ended) return { kind: 'end', state: 'skipped', reason: 'the agent left or was terminated' };
  if (i.state === 'held') {
    if (!f.conditionOpen) return { kind: 'end', state: 'skipped', reason: 'the condition closed while held' };
    return f.outage ? { kind: 'keep', recheckAt: null } : { kind: 'act' };
  }
  const actedAt = numberOf(i, 'actedAt');
  if (actedAt === null) {
    if (!f.conditionOpen)
      return { kind: 'end', state: 'skipped', reason: 'the condition closed before it was acted on' };
    return f.outage && HELD_DURING_OUTAGE.has(rung.action) ? { kind: 'hold' } : { kind: 'act' };
  }
  const deadline = actedAt + rung.timeoutMs;
  const timedOut = f.now >= deadline;
  const keep: Verdict = { kind: 'keep', recheckAt: deadline };
  switch (rung.action) {
    case 'wake':
    case 'send_signal': {
      if (!f.conditionOpen)
        return { kind: 'end', state: 'succeeded', reason: 'the condition closed after the wake' };
      const ack = ackOf(i, 'wake');
      if (refused(ack))
        return {
          kind: 'end',
          state: 'failed',
          reason: `the wake was answered ${ack?.outcome}${said(ack as AckEvidence)}`,
        };
      return timedOut
        ? {
            kind: 'end',
            state: 'failed',
            reason: `the condition still held ${rung.timeoutMs} ms after the wake`,
          }
        : keep;
    }
    case 'snapshot_and_restart': {
      if (i.evidence.phase === 'checkpoint') {
        const sentAt = numberOf(i, 'checkpointAt') ?? actedAt;
        const waitUntil = sentAt + Math.min(CHECKPOINT_WAIT_MS, rung.timeoutMs / 4);
        if (ackOf(i, 'checkpoint') !== null || f.now >= waitUntil) return { kind: 'restart' };
        return { kind: 'keep', recheckAt: waitUntil };
      }
      const ack = ackOf(i, 'restart');
      if (refused(ack))
        return {
          kind: 'end',
          state: 'failed',
          reason: `the restart was answered ${ack?.outcome}${said(ack as AckEvidence)}`,
        };
      if (f.agent.incarnation > i.incarnation) {
        const quietEnds = f.agent.startedAt + f.quietPeriodMs;
        const beating = f.agent.lastHeartbeatAt !== null && f.agent.lastHeartbeatAt >= f.agent.startedAt;
        if (beating && !f.conditionOpen && f.now >= quietEnds) {
          return {
            kind: 'end',
            state: 'succeeded',
            reason: `incarnation ${f.agent.incarnation} runs and stayed well through its quiet period`,
          };
        }
        if (timedOut)
          return {
            kind: 'end',
            state: 'failed',
            reason: `incarnation ${f.agent.incarnation} did not recover within ${rung.timeoutMs} ms`,
          };
        return { kind: 'keep', recheckAt: Math.min(deadline, Math.max(quietEnds, f.now + 1)) };
      }
      return timedOut
        ? { kind: 'end', state: 'failed', reason: `no new incarnation within ${rung.timeoutMs} ms` }
        : keep;
    }
    case 'reassign': {
      const tasks = f.tasks ?? [];
      const taken = tasks.filter(
        (t) =>
          t.agentId !== null &&
          t.agentId !== i.agentId &&
          ['claimed', 'running', 'completed'].includes(t.status),
      );
      if (tasks.length > 0 && tasks.every((t) => taken.includes(t) || t.final)) {
        return taken.length > 0
          ? {
              kind: 'end',
              state: 'succeeded',
              reason: `another agent took ${taken.length === 1 ? 'the task' : `${taken.length} tasks`}`,
            }
          : { kind: 'end', state: 'skipped', reason: 'the tasks ended before another agent took them' };
      }
      if (tasks.length === 0) return { kind: 'end', state: 'skipped', reason: 'the task is gone' };
      return timedOut
        ? { kind: 'end', state: 'failed', reason: `no other agent took the task within ${rung.timeoutMs} ms` }
        : keep;
    }
    case 'alert': {
      if (f.alert === 'delivered')
        return { kind: 'end', state: 'succeeded', reason: 'the alert was delivered' };
      if (f.alert === 'failed')
        return { kind: 'end', state: 'failed', reason: 'the alert could not be delivered' };
      return timedOut
        ? { kind: 'end', state: 'failed', reason: `the alert was not delivered within ${rung.timeoutMs} ms` }
        : keep;
    }
    case 'terminate': {
      const ack = ackOf(i, 'terminate');
      if (ack?.outcome === 'done')
        return { kind: 'end', state: 'succeeded', reason: `the process is gone${said(ack)}` };
      if (refused(ack))
        return {
          kind: 'end',
          state: 'failed',
          reason: `the terminate was answered ${ack?.outcome}${said(ack as AckEvidence)}`,
        };
      return timedOut
        ? {
            kind: 'end',
            state: 'failed',
            reason: `the process was not seen to exit within ${rung.timeoutMs} ms`,
          }
        : keep;
    }
  }
}

/** The trigger an intervention answers as an episode key. */
export const episodeKey = (trigger: InterventionTrigger, taskId: string | null): string =>
  taskId === null ? trigger : `${trigger} ${taskId}`;
