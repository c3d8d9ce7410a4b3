/**
 * The recovery ladder in the coordinator, on a manual clock and a real SQLite store: each rung's
 * action and success criterion, escalation, `recovery_failed`, `for`, rungs held during a dependency
 * outage, reassignment with fencing — every step an intervention.
 */
import type { AgentCommand, AgentHeartbeatRequest, Intervention } from '@rouse/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpReceiver } from '../test-support/alert-receivers.js';
import {
  ADMIN,
  type CoordinatorFixture,
  createFixtureWithPolicies,
  type FixtureAgent,
} from '../test-support/coordinator-fixture.js';
import { storeCallCounter } from '../test-support/store-call-counter.js';

let f: CoordinatorFixture;
afterEach(async () => {
  await f.close();
});

const withPolicies = (yaml: string) => createFixtureWithPolicies(yaml, { ladderSweepMs: 200 });

const tick = (ms: number, step = 100) => f.tick(ms, step);

const registerAs = async (agentType: string, extra: { key?: string; requires?: string[] } = {}) =>
  (await f.registerAs(agentType, extra)).agent;

const beat = (a: FixtureAgent, req: AgentHeartbeatRequest = {}) =>
  f.coordinator.agentHeartbeat(a.caller, a.agentId, req);

const interventionsOf = async (agentId: string): Promise<Intervention[]> =>
  (await f.coordinator.listInterventions(ADMIN, { agentId })).interventions.slice().reverse();

const steps = (list: Intervention[]) => list.map((i) => `${i.condition}/${i.action}#${i.attempt}:${i.state}`);

/** Heartbeats with unchanged progress every second for `ms`, collecting the commands they get. */
async function beatsWithoutProgress(a: FixtureAgent, ms: number, progress = 1): Promise<AgentCommand[]> {
  const got: AgentCommand[] = [];
  for (let done = 0; done < ms; done += 1000) {
    got.push(...(await beat(a, { status: 'running', progress })).commands);
    await tick(1000);
  }
  return got;
}

const STALL_LADDER = `
policies:
  - name: llm
    agent_type: llm
    heartbeat: { expected_interval: 1s, timeout_factor: 3 }
    stall_detection: { enabled: true, stall_threshold: 3s }
    recovery_actions:
      - action: send_signal
        signal: SIGUSR1
        on_condition: stall_detected
        max_attempts: 2
        timeout: 4s
      - action: snapshot_and_restart
        on_condition: heartbeat_timeout
        timeout: 20s
      - action: alert
        on_condition: recovery_failed
        severity: high
`;

describe('the recovery ladder', () => {
  it('a wake that cures: the wake reaches the agent, progress moves, the intervention succeeded and nothing else runs', async () => {
    f = await withPolicies(STALL_LADDER);
    const a = await registerAs('llm');
    const commands = await beatsWithoutProgress(a, 5000);
    const wake = commands.find((c) => c.type === 'wake');
    expect(wake).toMatchObject({ type: 'wake', signal: 'SIGUSR1' });
    expect(wake?.id).toMatch(/^cmd_/);
    const [opened] = await interventionsOf(a.agentId);
    expect(opened).toMatchObject({
      condition: 'progress_stalled',
      action: 'send_signal',
      rung: 0,
      attempt: 1,
      state: 'pending',
      actor: `coordinator:${opened?.coordinatorId}`,
      commandId: wake?.id,
    });
    expect(opened?.evidence.condition).toMatchObject({ thresholdMs: 3000 });
    expect((await f.coordinator.diagnoseAgent(ADMIN, a.agentId)).recovery).toMatchObject({
      state: 'acting',
      message: 'send_signal (rung 1, attempt 1) for progress_stalled is under way',
    });
    // The agent answers and moves on.
    await beat(a, { status: 'running', progress: 2, acks: [{ commandId: wake!.id!, outcome: 'done' }] });
    await tick(1000);
    const [done, ...more] = await interventionsOf(a.agentId);
    expect(done).toMatchObject({ state: 'succeeded', reason: 'the condition closed after the wake' });
    expect(done?.evidence.wakeAck).toMatchObject({ outcome: 'done' });
    expect(more).toEqual([]);
    // Published: opened, noted (command sent), noted (ack), ended.
    const states = f.events.flatMap((e) => (e.type === 'intervention' ? [e.intervention.state] : []));
    expect(states.at(-1)).toBe('succeeded');
  });

  it('escalates: two signals within the budget, then recovery_failed runs the alert rung once, then nothing more', async () => {
    f = await withPolicies(STALL_LADDER);
    const a = await registerAs('llm');
    const commands = await beatsWithoutProgress(a, 20_000);
    expect(commands.filter((c) => c.type === 'wake')).toHaveLength(2);
    const list = await interventionsOf(a.agentId);
    expect(steps(list)).toEqual([
      'progress_stalled/send_signal#1:failed',
      'progress_stalled/send_signal#2:failed',
      // No alerting wired into this coordinator: the alert rung has nothing to send through.
      'recovery_failed/alert#1:skipped',
    ]);
    expect(list[0]?.reason).toBe('the condition still held 4000 ms after the wake');
    expect(list[2]?.evidence).toMatchObject({
      failedCondition: 'progress_stalled',
      attempts: [
        { action: 'send_signal', attempt: 1, state: 'failed' },
        { action: 'send_signal', attempt: 2, state: 'failed' },
      ],
    });
    // Left for a person: more time changes nothing, and the diagnosis says so.
    await beatsWithoutProgress(a, 10_000);
    expect(await interventionsOf(a.agentId)).toHaveLength(3);
    const diagnosis = await f.coordinator.diagnoseAgent(ADMIN, a.agentId);
    expect(diagnosis.recovery).toMatchObject({
      state: 'exhausted',
      message: 'the recovery ladder ran out for progress_stalled: the agent is left for a person',
    });
    expect(diagnosis.recovery.interventions.map((i) => i.action)).toEqual([
      'alert',
      'send_signal',
      'send_signal',
    ]);
    expect(diagnosis.suggestions[0]).toContain(`rouse interventions --agent ${a.agentId}`);
  });

  it('snapshot_and_restart: checkpoint, then restart; the next incarnation heartbeating through its quiet period is success', async () => {
    f = await withPolicies(`${STALL_LADDER}    quiet_period: 2s\n`);
    const a = await registerAs('llm', { key: 'host-1/llm-1' });
    await beat(a, { status: 'running' });
    await tick(3500, 50);
    const [first] = await interventionsOf(a.agentId);
    expect(first).toMatchObject({
      condition: 'heartbeat_timeout',
      action: 'snapshot_and_restart',
      state: 'pending',
    });
    expect(first?.evidence).toMatchObject({ phase: 'checkpoint' });
    // Acted on in the same moment the agent was found lost.
    const [lost] = (await f.coordinator.getAgent(ADMIN, a.agentId)).conditions;
    expect(first?.startedAt).toBe(lost?.since);
    // Nobody answers the checkpoint (the process is hung): the restart follows after the wait.
    await tick(5000);
    const [restarting] = await interventionsOf(a.agentId);
    expect(restarting?.evidence).toMatchObject({ phase: 'restart' });
    // Its supervisor restarts it: the same key registers again.
    const next = await registerAs('llm', { key: 'host-1/llm-1' });
    expect(next.agentId).toBe(a.agentId);
    await beat(next, { status: 'running', progress: 1 });
    await tick(1000);
    expect((await interventionsOf(a.agentId))[0]?.state).toBe('pending');
    await beat(next, { status: 'running', progress: 2 });
    await tick(1000);
    await beat(next, { status: 'running', progress: 3 });
    await tick(500);
    const [ended] = await interventionsOf(a.agentId);
    expect(ended).toMatchObject({ state: 'succeeded', incarnation: 1 });
    expect(ended?.reason).toContain('incarnation 2');
  });

  it('a stall that comes back right after a restart cured it goes on down the ladder, not round again', async () => {
    f = await withPolicies(`
policies:
  - name: llm
    agent_type: llm
    heartbeat: { expected_interval: 1s, timeout_factor: 3 }
    stall_detection: { enabled: true, stall_threshold: 3s }
    recovery_actions:
      - action: snapshot_and_restart
        on_condition: stall_detected
        timeout: 20s
      - action: alert
        on_condition: recovery_failed
        severity: high
`);
    const a = await registerAs('llm', { key: 'host-1/llm-1' });
    await beatsWithoutProgress(a, 10_000); // stalled; nobody answers the checkpoint: the restart is sent
    const next = await registerAs('llm', { key: 'host-1/llm-1' });
    for (let p = 2; p <= 4; p++) {
      await beat(next, { status: 'running', progress: p });
      await tick(1000);
    }
    expect(steps(await interventionsOf(a.agentId))).toEqual([
      'progress_stalled/snapshot_and_restart#1:succeeded',
    ]);
    // The restarted program stalls again at once: its restart was spent within the hour.
    await beatsWithoutProgress(next, 8000, 4);
    const after = steps(await interventionsOf(a.agentId));
    expect(after[0]).toBe('progress_stalled/snapshot_and_restart#1:succeeded');
    expect(after.slice(1).map((s) => s.replace(/:.*/, ''))).toEqual(['recovery_failed/alert#1']);
  });

  it('a restart nobody carries out fails at its timeout, and recovery_failed follows', async () => {
    f = await withPolicies(STALL_LADDER);
    const a = await registerAs('llm');
    await beat(a, { status: 'running' });
    await tick(25_000, 500);
    expect(steps(await interventionsOf(a.agentId))).toEqual([
      'heartbeat_timeout/snapshot_and_restart#1:failed',
      'recovery_failed/alert#1:skipped',
    ]);
  });

  it('a sweep over many agents in trouble runs at most four of their ladders at once', async () => {
    // Each ladder step reads its agent first: count those reads in flight, once counting is on.
    const reads = storeCallCounter(['getAgent']);
    reads.on = false;
    f = await createFixtureWithPolicies(STALL_LADDER, { ladderSweepMs: 200 }, reads.wrap);
    const agents: FixtureAgent[] = [];
    for (let i = 0; i < 12; i++) agents.push(await registerAs('llm'));
    for (const a of agents) await beat(a, { status: 'running' });
    await tick(4000, 500); // every lease runs out: twelve agents lost, each with a restart pending
    for (const a of agents) expect(steps(await interventionsOf(a.agentId))[0]).toMatch(/:pending$/);
    reads.on = true;
    await tick(1000, 200);
    reads.on = false;
    expect(reads.calls).toBeGreaterThanOrEqual(12);
    expect(reads.most).toBe(4);
  });

  it("a ladder step that changes nothing reads the agent's history once", async () => {
    // Each step reads its agent once (counted as steps) and its history; an attempt still under way
    // that is kept changes nothing, so the history is not read again for the open conditions.
    const agentReads = storeCallCounter(['getAgent']);
    const lists = storeCallCounter(['listInterventions']);
    agentReads.on = false;
    lists.on = false;
    f = await createFixtureWithPolicies(STALL_LADDER, { ladderSweepMs: 200 }, (s) =>
      agentReads.wrap(lists.wrap(s)),
    );
    const agents: FixtureAgent[] = [];
    for (let i = 0; i < 6; i++) agents.push(await registerAs('llm'));
    for (const a of agents) await beat(a, { status: 'running' });
    await tick(4000, 500); // every lease runs out: six agents lost, each with a restart pending
    for (const a of agents) expect(steps(await interventionsOf(a.agentId))[0]).toMatch(/:pending$/);
    agentReads.on = true;
    lists.on = true;
    await tick(1000, 200);
    agentReads.on = false;
    lists.on = false;
    expect(agentReads.calls).toBeGreaterThanOrEqual(6);
    // One history read a step, and one list of the open interventions a sweep (at most 5 sweeps).
    expect(lists.calls).toBeLessThanOrEqual(agentReads.calls + 5);
  });

  it('`for`: the ladder waits until the condition has held that long', async () => {
    f = await withPolicies(
      STALL_LADDER.replace('    recovery_actions:', '    for: 5s\n    recovery_actions:'),
    );
    const a = await registerAs('llm');
    await beatsWithoutProgress(a, 7000);
    expect(await interventionsOf(a.agentId)).toEqual([]);
    await beatsWithoutProgress(a, 2000);
    expect(steps(await interventionsOf(a.agentId))).toEqual(['progress_stalled/send_signal#1:pending']);
  });

  it('holds the rungs that cannot cure a dependency outage, then acts when it is over', async () => {
    f = await withPolicies(`
policies:
  - name: llm
    agent_type: llm
    heartbeat: { expected_interval: 1s, timeout_factor: 3 }
    stall_detection: { enabled: true, stall_threshold: 3s }
    recovery_actions:
      - action: snapshot_and_restart
        on_condition: stall_detected
        timeout: 30s
`);
    const a = await registerAs('llm', { requires: ['openai'] });
    await beat(a, { status: 'running', progress: 1 });
    await f.coordinator.reportDependency(a.caller, {
      name: 'openai',
      state: 'rate_limited',
      retryAfterMs: 60_000,
    });
    await beatsWithoutProgress(a, 6000);
    const [held] = await interventionsOf(a.agentId);
    expect(held).toMatchObject({
      condition: 'progress_stalled',
      action: 'snapshot_and_restart',
      state: 'held',
    });
    expect(held?.evidence.actedAt).toBeUndefined();
    // Nothing was sent while it is held.
    const watch = await f.coordinator.agentHeartbeat(a.caller, a.agentId, { status: 'running', progress: 1 });
    expect(watch.commands.filter((c) => c.type === 'checkpoint' || c.type === 'restart')).toEqual([]);
    await f.coordinator.reportDependency(a.caller, { name: 'openai', state: 'up' });
    const after = await beatsWithoutProgress(a, 3000);
    expect(after.map((c) => c.type)).toContain('checkpoint');
    const [acting] = await interventionsOf(a.agentId);
    expect(acting).toMatchObject({ state: 'pending', evidence: { phase: expect.any(String) } });
  });

  it('reassign: the stuck holder loses the task at once (its late complete refused) and another agent takes it', async () => {
    f = await withPolicies(`
policies:
  - name: llm
    agent_type: llm
    heartbeat: { expected_interval: 1s, timeout_factor: 3 }
    stall_detection: { enabled: true, stall_threshold: 3s }
    recovery_actions:
      - action: reassign
        on_condition: stall_detected
        timeout: 30s
`);
    const stuck = await registerAs('llm');
    const task = await f.running(stuck, { timing: { stallTimeoutMs: 3000 } });
    for (let i = 0; i < 5; i++) {
      await beat(stuck, {
        status: 'running',
        tasks: [{ taskId: task.id, version: task.version, progress: 0.1 }],
      });
      await tick(1000);
    }
    const [moving] = await interventionsOf(stuck.agentId);
    expect(moving).toMatchObject({
      condition: 'progress_stalled',
      taskId: task.id,
      action: 'reassign',
      state: 'pending',
    });
    expect(moving?.evidence.reassignedTaskIds).toEqual([task.id]);
    const requeued = await f.task(task.id);
    expect(requeued).toMatchObject({ status: 'timeout', error: { code: 'agent_reassigned' } });
    await expect(
      f.coordinator.completeTask(stuck.caller, task.id, { version: task.version, result: { late: true } }),
    ).rejects.toMatchObject({ code: expect.stringMatching(/stale_version|invalid_transition/) });
    const helper = await registerAs('llm');
    const claimed = await f.claimOne(helper);
    expect(claimed.id).toBe(task.id);
    await tick(500);
    const [ended] = await interventionsOf(stuck.agentId);
    expect(ended).toMatchObject({ state: 'succeeded', reason: 'another agent took the task' });
  });

  it('terminate: the command carries the grace; its `done` answer is success', async () => {
    f = await withPolicies(`
policies:
  - name: llm
    agent_type: llm
    heartbeat: { expected_interval: 1s, timeout_factor: 3 }
    error_timeout: 2s
    recovery_actions:
      - action: terminate
        on_condition: error_persisting
        grace: 5s
`);
    const a = await registerAs('llm');
    let terminate: AgentCommand | undefined;
    for (let i = 0; i < 4 && terminate === undefined; i++) {
      terminate = (await beat(a, { status: 'error', statusMessage: 'cannot reach the repo' })).commands.find(
        (c) => c.type === 'terminate',
      );
      await tick(1000);
    }
    expect(terminate).toMatchObject({ type: 'terminate', graceMs: 5000 });
    await beat(a, {
      status: 'terminating',
      acks: [{ commandId: terminate!.id!, outcome: 'done', message: 'exited 143' }],
    });
    await tick(300);
    const [ended] = await interventionsOf(a.agentId);
    expect(ended).toMatchObject({
      action: 'terminate',
      state: 'succeeded',
      reason: 'the process is gone: exited 143',
    });
  });

  it('an intervention left unacted by its coordinator (stopped between opening and acting) is carried out by the next', async () => {
    // `for` keeps this coordinator's own ladder out of the way while the orphan is planted.
    f = await withPolicies(
      STALL_LADDER.replace('    recovery_actions:', '    for: 30s\n    recovery_actions:'),
    );
    const a = await registerAs('llm');
    await beatsWithoutProgress(a, 4000);
    const agent = await f.coordinator.getAgent(ADMIN, a.agentId);
    expect(agent.conditions.map((c) => c.condition)).toEqual(['progress_stalled']);
    // As if a coordinator had opened it and died before sending anything.
    await f.store.openIntervention({
      id: 'itv_orphan',
      agentId: a.agentId,
      incarnation: agent.incarnation,
      taskId: null,
      condition: 'progress_stalled',
      action: 'send_signal',
      rung: 0,
      attempt: 1,
      reason: 'opened by a coordinator that died',
      evidence: {},
      actor: 'coordinator:dead',
      coordinatorId: 'dead',
      shardEpoch: 1,
    });
    const commands = await beatsWithoutProgress(a, 2000);
    const wakes = commands.filter((c) => c.type === 'wake');
    expect(wakes).toHaveLength(1);
    const [orphan] = await interventionsOf(a.agentId);
    expect(orphan).toMatchObject({ id: 'itv_orphan', state: 'pending', commandId: wakes[0]?.id });
    expect(orphan?.evidence.actedAt).toEqual(expect.any(Number));
  });
});

describe('forty agents behind one rate-limited dependency', () => {
  it('restarts nothing (held), sends one grouped alert instead of forty, inhibits the stall alerts, and resolves when the dependency is back', async () => {
    const hook = await startHttpReceiver();
    try {
      f = await withPolicies(`
channels:
  ops: { type: webhook, url: "${hook.url}" }
alerts: { group_wait: 1s, group_interval: 10s }
policies:
  - name: llm
    agent_type: llm
    heartbeat: { expected_interval: 1s, timeout_factor: 3 }
    stall_detection: { enabled: true, stall_threshold: 3s }
    recovery_actions:
      - action: alert
        on_condition: dependency_down
        severity: high
      - action: snapshot_and_restart
        on_condition: stall_detected
      - action: alert
        on_condition: recovery_failed
`);
      const agents: FixtureAgent[] = [];
      for (let i = 0; i < 40; i++) agents.push(await registerAs('llm', { requires: ['openai'] }));
      const beatAll = async (progress: number) => {
        const commands: AgentCommand[] = [];
        for (const a of agents) commands.push(...(await beat(a, { status: 'running', progress })).commands);
        return commands;
      };
      await beatAll(1);
      await f.coordinator.reportDependency(ADMIN, {
        name: 'openai',
        state: 'rate_limited',
        retryAfterMs: 120_000,
      });
      const sent: AgentCommand[] = [];
      for (let s = 0; s < 8; s++) {
        sent.push(...(await beatAll(1)));
        await tick(1000, 250);
      }
      // No restart: every stall's restart rung is held; no checkpoint or restart went out.
      expect(sent.filter((c) => c.type === 'checkpoint' || c.type === 'restart')).toEqual([]);
      const all = (await f.coordinator.listInterventions(ADMIN, { limit: 1000 })).interventions;
      const restarts = all.filter((i) => i.action === 'snapshot_and_restart');
      expect(restarts).toHaveLength(40);
      expect(new Set(restarts.map((i) => i.state))).toEqual(new Set(['held']));
      // A stall alert raised for them meanwhile (another rung, a person) is inhibited by the outage's.
      for (const a of agents) {
        await f.coordinator.alerts.raise({
          agentId: a.agentId,
          agentType: 'llm',
          condition: 'progress_stalled',
          severity: 'medium',
          summary: 'stalled',
          source: 'alert_rung',
        });
      }
      for (let s = 0; s < 3; s++) {
        sent.push(...(await beatAll(1)));
        await tick(1000, 250);
      }
      // One grouped alert for the outage, delivered once; the stalls are not alerted on their own.
      const firing = (await f.coordinator.listAlerts(ADMIN, { states: ['firing'] })).alerts;
      const outage = firing.find((a) => a.group.condition === 'dependency_down');
      expect(outage?.agentIds).toHaveLength(40);
      const stalls = firing.find((a) => a.group.condition === 'progress_stalled');
      expect(stalls?.agentIds).toHaveLength(40);
      expect(stalls?.notifications).toEqual([]);
      expect(hook.requests).toHaveLength(1);
      expect(JSON.parse(hook.requests[0]!.body)).toMatchObject({
        kind: 'firing',
        alert: { group: { condition: 'dependency_down' } },
      });

      // The dependency is back and the agents move again: the held restarts are skipped, the alert resolves.
      await f.coordinator.reportDependency(ADMIN, { name: 'openai', state: 'up' });
      for (let s = 0; s < 4; s++) {
        sent.push(...(await beatAll(2 + s)));
        await tick(1000, 250);
      }
      expect(sent.filter((c) => c.type === 'checkpoint' || c.type === 'restart')).toEqual([]);
      const after = (await f.coordinator.listInterventions(ADMIN, { limit: 1000 })).interventions;
      expect(new Set(after.filter((i) => i.action === 'snapshot_and_restart').map((i) => i.state))).toEqual(
        new Set(['skipped']),
      );
      expect((await f.coordinator.listAlerts(ADMIN, { states: ['firing'] })).alerts).toEqual([]);
      const kinds = hook.requests.map((r) => {
        const body = JSON.parse(r.body) as { kind: string; alert: { group: { condition: string } } };
        return `${body.alert.group.condition}:${body.kind}`;
      });
      // The outage's alert resolves; the stall group, never notified, resolves without a word.
      expect(kinds).toEqual(['dependency_down:firing', 'dependency_down:resolved']);
    } finally {
      await hook.close();
    }
  });
});
