import type { Intervention } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import type { RecoveryAction } from '../policies/resolved-policy.js';
import { type AttemptFacts, judgeAttempt, nextStep, RECURRENCE_WINDOW_MS } from './ladder.js';

const common = { maxAttempts: 1, windowMs: null, timeoutMs: 10_000 } as const;
const wake: RecoveryAction = { action: 'wake', onCondition: 'stall_detected', ...common, maxAttempts: 2 };
const restart: RecoveryAction = {
  action: 'snapshot_and_restart',
  onCondition: 'any',
  ...common,
  snapshotTtlMs: 1,
};
const reassign: RecoveryAction = { action: 'reassign', onCondition: 'stall_detected', ...common };
const alert: RecoveryAction = {
  action: 'alert',
  onCondition: 'recovery_failed',
  ...common,
  channels: ['ops'],
  severity: 'high',
};

function past(over: Partial<Intervention>): Intervention {
  return {
    id: 'itv',
    agentId: 'agt',
    incarnation: 1,
    taskId: null,
    condition: 'progress_stalled',
    action: 'wake',
    rung: 0,
    attempt: 1,
    state: 'failed',
    reason: '',
    evidence: { actedAt: 1000 },
    actor: 'coordinator:c',
    commandId: null,
    coordinatorId: 'c',
    shardEpoch: 1,
    startedAt: 1000,
    endedAt: 2000,
    ...over,
  };
}

const episode = { trigger: 'progress_stalled', taskId: null, since: 1000 } as const;
const base = { now: 5000, forMs: 0, episode, history: [], outage: false, holdsTask: true };

describe('nextStep', () => {
  it('takes the first listening rung with budget left, then the next, then is exhausted', () => {
    const rungs = [wake, restart];
    expect(nextStep({ ...base, rungs })).toMatchObject({ kind: 'start', rung: 0, attempt: 1 });
    const once = [past({})];
    expect(nextStep({ ...base, rungs, history: once })).toMatchObject({ kind: 'start', rung: 0, attempt: 2 });
    const twice = [past({}), past({ attempt: 2 })];
    expect(nextStep({ ...base, rungs, history: twice })).toMatchObject({
      kind: 'start',
      rung: 1,
      attempt: 1,
    });
    const all = [...twice, past({ rung: 1, action: 'snapshot_and_restart' })];
    expect(nextStep({ ...base, rungs, history: all })).toEqual({ kind: 'exhausted' });
  });

  it('counts attempts since the condition opened and through the hour before, or within the window', () => {
    const old = [past({ startedAt: 500 }), past({ startedAt: 600, attempt: 2 })];
    // An earlier episode's attempts count without a window when it was within the hour: a condition
    // that comes back goes on down the ladder rather than starting over...
    expect(nextStep({ ...base, rungs: [wake], history: old })).toEqual({ kind: 'exhausted' });
    expect(nextStep({ ...base, rungs: [wake, restart], history: old })).toMatchObject({
      rung: 1,
      attempt: 1,
    });
    // ...and not once that hour has passed.
    const later = { ...base, now: 500 + RECURRENCE_WINDOW_MS + 1, episode: { ...episode, since: 3_600_000 } };
    expect(nextStep({ ...later, rungs: [wake], history: old })).toMatchObject({ rung: 0, attempt: 2 });
    expect(nextStep({ ...later, now: later.now + 1000, rungs: [wake], history: old })).toMatchObject({
      attempt: 1,
    });
    // recovery_failed counts per episode: a person is told each time the ladder runs out.
    const rf = [past({ condition: 'recovery_failed', rung: 1, action: 'alert', startedAt: 600 })];
    const rfEpisode = { ...base, episode: { ...episode, trigger: 'recovery_failed' as const } };
    expect(nextStep({ ...rfEpisode, rungs: [wake, alert], history: rf })).toMatchObject({
      rung: 1,
      attempt: 1,
    });
    // Within a window, the window decides.
    const windowed: RecoveryAction = { ...wake, windowMs: 60_000 };
    expect(nextStep({ ...base, rungs: [windowed], history: old })).toEqual({ kind: 'exhausted' });
    // Another condition's or task's attempts never count.
    const other = [past({ condition: 'resource_runaway' }), past({ taskId: 'tsk_1', attempt: 2 })];
    expect(nextStep({ ...base, rungs: [wake], history: other })).toMatchObject({ attempt: 1 });
  });

  it('waits for `for`; skips reassign without a task; holds restart during an outage; a held-then-skipped attempt costs nothing', () => {
    expect(nextStep({ ...base, rungs: [wake], forMs: 10_000 })).toEqual({ kind: 'wait', at: 11_000 });
    expect(nextStep({ ...base, rungs: [reassign, restart], holdsTask: false })).toMatchObject({ rung: 1 });
    expect(nextStep({ ...base, rungs: [restart], outage: true })).toMatchObject({
      kind: 'start',
      held: true,
    });
    expect(nextStep({ ...base, rungs: [wake], outage: true })).toMatchObject({ kind: 'start', held: false });
    const heldOnly = [past({ rung: 0, action: 'snapshot_and_restart', state: 'skipped', evidence: {} })];
    expect(nextStep({ ...base, rungs: [restart], history: heldOnly })).toMatchObject({
      kind: 'start',
      attempt: 1,
    });
  });

  it('recovery_failed is answered only by rungs listening for it (never by `any`)', () => {
    const rf = { ...base, episode: { ...episode, trigger: 'recovery_failed' as const } };
    expect(nextStep({ ...rf, rungs: [restart] })).toEqual({ kind: 'exhausted' });
    expect(nextStep({ ...rf, rungs: [restart, alert] })).toMatchObject({ kind: 'start', rung: 1 });
  });
});

const facts = (over: Partial<AttemptFacts> = {}): AttemptFacts => ({
  now: 5000,
  conditionOpen: true,
  outage: false,
  agent: { incarnation: 1, startedAt: 0, lastHeartbeatAt: 4000, ended: false },
  quietPeriodMs: 1000,
  ...over,
});

describe('judgeAttempt', () => {
  const pending = (over: Partial<Intervention> = {}) => past({ state: 'pending', endedAt: null, ...over });

  it('a wake succeeds when the condition closes, fails when refused or at its timeout', () => {
    expect(judgeAttempt(pending(), wake, facts())).toEqual({ kind: 'keep', recheckAt: 11_000 });
    expect(judgeAttempt(pending(), wake, facts({ conditionOpen: false }))).toMatchObject({
      state: 'succeeded',
    });
    expect(judgeAttempt(pending(), wake, facts({ now: 11_000 }))).toMatchObject({ state: 'failed' });
    const refused = pending({ evidence: { actedAt: 1000, wakeAck: { outcome: 'unsupported' } } });
    expect(judgeAttempt(refused, wake, facts())).toMatchObject({ state: 'failed' });
  });

  it('acts on what was not acted on, unless the condition closed; holds and releases around an outage', () => {
    const unacted = pending({ evidence: {} });
    expect(judgeAttempt(unacted, restart, facts())).toEqual({ kind: 'act' });
    expect(judgeAttempt(unacted, restart, facts({ outage: true }))).toEqual({ kind: 'hold' });
    expect(judgeAttempt(unacted, restart, facts({ conditionOpen: false }))).toMatchObject({
      state: 'skipped',
    });
    const held = past({ state: 'held', endedAt: null, evidence: {} });
    expect(judgeAttempt(held, restart, facts({ outage: true }))).toEqual({ kind: 'keep', recheckAt: null });
    expect(judgeAttempt(held, restart, facts())).toEqual({ kind: 'act' });
    expect(judgeAttempt(held, restart, facts({ conditionOpen: false }))).toMatchObject({ state: 'skipped' });
  });

  it('snapshot_and_restart: restart after the snapshot or the wait; success needs the new incarnation well through its quiet period', () => {
    const checkpoint = pending({
      action: 'snapshot_and_restart',
      evidence: { actedAt: 1000, phase: 'checkpoint', checkpointAt: 1000 },
    });
    expect(judgeAttempt(checkpoint, restart, facts({ now: 2000 }))).toEqual({
      kind: 'keep',
      recheckAt: 3500,
    });
    expect(judgeAttempt(checkpoint, restart, facts({ now: 3500 }))).toEqual({ kind: 'restart' });
    const answered = {
      ...checkpoint,
      evidence: { ...checkpoint.evidence, checkpointAck: { outcome: 'done' } },
    };
    expect(judgeAttempt(answered, restart, facts({ now: 1500 }))).toEqual({ kind: 'restart' });
    const restarting = pending({
      action: 'snapshot_and_restart',
      evidence: { actedAt: 1000, phase: 'restart' },
    });
    const reborn = { incarnation: 2, startedAt: 4500, lastHeartbeatAt: 4600, ended: false };
    expect(judgeAttempt(restarting, restart, facts({ agent: reborn, conditionOpen: false }))).toMatchObject({
      kind: 'keep',
    });
    expect(
      judgeAttempt(restarting, restart, facts({ now: 5600, agent: reborn, conditionOpen: false })),
    ).toMatchObject({ state: 'succeeded' });
    expect(judgeAttempt(restarting, restart, facts({ now: 11_000 }))).toMatchObject({ state: 'failed' });
  });

  it('reassign succeeds when another agent holds the task; alert by its delivery', () => {
    const moving = pending({ action: 'reassign', rung: 0 });
    expect(
      judgeAttempt(moving, reassign, facts({ tasks: [{ agentId: null, status: 'timeout', final: false }] })),
    ).toMatchObject({ kind: 'keep' });
    expect(
      judgeAttempt(
        moving,
        reassign,
        facts({ tasks: [{ agentId: 'agt_2', status: 'running', final: false }] }),
      ),
    ).toMatchObject({ state: 'succeeded' });
    expect(
      judgeAttempt(moving, reassign, facts({ tasks: [{ agentId: null, status: 'cancelled', final: true }] })),
    ).toMatchObject({ state: 'skipped' });
    const raised = pending({ action: 'alert', condition: 'recovery_failed' });
    expect(judgeAttempt(raised, alert, facts({ alert: 'delivered' }))).toMatchObject({ state: 'succeeded' });
    expect(judgeAttempt(raised, alert, facts({ alert: 'failed' }))).toMatchObject({ state: 'failed' });
    expect(judgeAttempt(raised, alert, facts({ alert: 'pending' }))).toMatchObject({ kind: 'keep' });
  });

  it('anything is skipped once the agent left', () => {
    expect(
      judgeAttempt(
        pending(),
        wake,
        facts({ agent: { incarnation: 1, startedAt: 0, lastHeartbeatAt: 1, ended: true } }),
      ),
    ).toMatchObject({ state: 'skipped' });
  });
});
