/**
 * The watchdog in the coordinator, on a manual clock and a real SQLite store: agent leases (lost
 * exactly when the lease runs out), the detectors after heartbeats and on their timers, incarnations,
 * and the per-agent memory pruned when an agent is lost.
 */
import type { AgentHeartbeatRequest, StreamEvent } from '@rouse/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { parsePolicies } from '../core/policies/load-policies.js';
import {
  ADMIN,
  type CoordinatorFixture,
  createFixtureWithPolicies,
  type FixtureAgent,
} from '../test-support/coordinator-fixture.js';
import { fixedPolicies } from './policy-registry.js';

let f: CoordinatorFixture;
const withPolicies = (yaml: string) => createFixtureWithPolicies(yaml);
afterEach(async () => {
  await f.close();
});

const tick = (ms: number, step = 100) => f.tick(ms, step);

const registerAs = (agentType: string, extra: { key?: string; requires?: string[] } = {}) =>
  f.registerAs(agentType, extra);

const beat = (a: FixtureAgent, req: AgentHeartbeatRequest = {}) =>
  f.coordinator.agentHeartbeat(a.caller, a.agentId, req);

const conditionsOf = async (agentId: string) =>
  (await f.coordinator.getAgent(ADMIN, agentId)).conditions.map((c) => c.condition);

const conditionEvents = (events: StreamEvent[]) =>
  events.flatMap((e) => (e.type === 'agent.condition' ? [`${e.state}:${e.condition.condition}`] : []));

const FAST = `
policies:
  - name: fast
    agent_type: fast
    heartbeat: { expected_interval: 1s, timeout_factor: 3 }
    startup_timeout: 5s
    stall_detection: { enabled: true, stall_threshold: 10s }
    error_timeout: 20s
`;

describe('agent leases', () => {
  it('an agent that stops heartbeating is lost exactly when its lease runs out, with evidence', async () => {
    f = await withPolicies(FAST);
    const { agent, registration } = await registerAs('fast');
    expect(registration.heartbeatIntervalMs).toBe(1000);
    await tick(500);
    await beat(agent, { status: 'running' });
    const lastBeat = f.clock.now();
    expect((await f.coordinator.getAgent(ADMIN, agent.agentId)).leaseExpiresAt).toBe(lastBeat + 3000);
    await tick(2900);
    expect((await f.coordinator.getAgent(ADMIN, agent.agentId)).status).toBe('running');
    await tick(300, 5);
    const lost = await f.coordinator.getAgent(ADMIN, agent.agentId);
    expect(lost.status).toBe('lost');
    const [condition] = lost.conditions;
    expect(condition).toMatchObject({
      condition: 'heartbeat_timeout',
      evidence: {
        lastHeartbeatAt: lastBeat,
        expectedIntervalMs: 1000,
        timeoutMs: 3000,
        neverHeartbeat: false,
      },
    });
    // Detected at the deadline (the timer's few ms of margin), not a sweep later.
    expect(condition!.since - (lastBeat + 3000)).toBeGreaterThanOrEqual(0);
    expect(condition!.since - (lastBeat + 3000)).toBeLessThanOrEqual(10);
    expect(conditionEvents(f.events)).toEqual(['opened:heartbeat_timeout']);
    expect(f.events.some((e) => e.type === 'agent.status' && e.agent.status === 'lost')).toBe(true);
  });

  it('adaptive: with regular gaps the lease follows phi over them, never below the floor', async () => {
    f = await withPolicies(`
policies:
  - name: adaptive
    agent_type: adaptive
    heartbeat: { expected_interval: 1s, timeout_factor: 5, adaptive: true, min_timeout: 1500ms }
`);
    const { agent } = await registerAs('adaptive');
    // The first beats get the fixed lease (too few gaps for phi): 5 s.
    await beat(agent, { status: 'running' });
    expect((await f.coordinator.getAgent(ADMIN, agent.agentId)).leaseExpiresAt).toBe(f.clock.now() + 5000);
    for (let i = 0; i < 12; i++) {
      await tick(1000, 250);
      await beat(agent, { status: 'running' });
    }
    const last = f.clock.now();
    const lease = (await f.coordinator.getAgent(ADMIN, agent.agentId)).leaseExpiresAt! - last;
    // Regular 1 s gaps: phi reaches 8 a little past the mean (the std-dev floor is a tenth of it).
    expect(lease).toBeGreaterThanOrEqual(1500);
    expect(lease).toBeLessThan(2000);
    await tick(lease - 100, 50);
    expect((await f.coordinator.getAgent(ADMIN, agent.agentId)).status).toBe('running');
    await tick(200, 5);
    const lost = await f.coordinator.getAgent(ADMIN, agent.agentId);
    expect(lost.status).toBe('lost');
    expect(lost.conditions[0]?.evidence).toMatchObject({ timeoutMs: lease, lastHeartbeatAt: last });
  });

  it('a lost agent that heartbeats again is running again and the condition closes', async () => {
    f = await withPolicies(FAST);
    const { agent } = await registerAs('fast');
    await beat(agent, { status: 'running' });
    await tick(3500);
    expect((await f.coordinator.getAgent(ADMIN, agent.agentId)).status).toBe('lost');
    await beat(agent, { status: 'running' });
    const back = await f.coordinator.getAgent(ADMIN, agent.agentId);
    expect(back).toMatchObject({ status: 'running', conditions: [] });
    const closed = (await f.coordinator.listConditions(ADMIN, { agentId: agent.agentId }))[0];
    expect(closed).toMatchObject({ condition: 'heartbeat_timeout', closeReason: 'heartbeats resumed' });
  });

  it('an agent that never sends its first heartbeat is lost after the startup timeout', async () => {
    f = await withPolicies(FAST);
    const { agent } = await registerAs('fast');
    await tick(4900);
    expect((await f.coordinator.getAgent(ADMIN, agent.agentId)).status).toBe('idle');
    await tick(300);
    const a = await f.coordinator.getAgent(ADMIN, agent.agentId);
    expect(a.status).toBe('lost');
    expect(a.conditions[0]?.evidence).toMatchObject({ neverHeartbeat: true, lastHeartbeatAt: null });
  });

  it('forgets what it keeps of a lost agent (polls, tokens, timers)', async () => {
    f = await withPolicies(FAST);
    const agents = await Promise.all([registerAs('fast'), registerAs('fast'), registerAs('fast')]);
    for (const { agent } of agents) {
      await f.coordinator.claim(agent.caller, agent.agentId, { types: ['t'] });
      await beat(agent, { status: 'running', progress: 0.1 });
    }
    const before = f.coordinator.stats().agentMemory;
    expect(before.polls).toBe(3);
    expect(before.tokens).toBe(0); // the fixture's callers skip token lookups
    await tick(3500);
    expect(f.coordinator.stats().agentMemory).toMatchObject({ polls: 0, detectorTimers: 0, statuses: 0 });
    // A lost agent may come back and claim again.
    const { agent } = agents[0]!;
    await beat(agent, { status: 'running' });
    expect((await f.coordinator.claim(agent.caller, agent.agentId, { types: ['t'] })).tasks).toEqual([]);
  });

  it('after a restart, leases get a grace of one full lease', async () => {
    f = await withPolicies(FAST);
    const { agent } = await registerAs('fast');
    await beat(agent, { status: 'running' });
    await f.coordinator.stop();
    await f.advance(10_000); // the coordinator was away; the lease ran out meanwhile
    const parsed = parsePolicies(FAST, 'test.yaml');
    const second = await f.restart({ policies: fixedPolicies(parsed.ok ? parsed.set : undefined) });
    await tick(2900);
    expect((await second.getAgent(ADMIN, agent.agentId)).status).toBe('running');
    await tick(300);
    expect((await second.getAgent(ADMIN, agent.agentId)).status).toBe('lost');
  });
});

describe('detectors', () => {
  it('progress_stalled opens at the threshold on a held task (exact timer) and closes when progress moves', async () => {
    f = await withPolicies(FAST);
    const { agent } = await registerAs('fast');
    const t = await f.running(agent, { timing: { stallTimeoutMs: 5000 } });
    const startedAt = t.startedAt!;
    const beatTask = (progress: number) =>
      beat(agent, { status: 'running', tasks: [{ taskId: t.id, version: t.version, progress }] });
    await beatTask(0.1);
    const movedAt = f.clock.now();
    for (let i = 0; i < 49; i++) {
      await tick(100);
      if (i % 5 === 4) await beatTask(0.1);
    }
    expect(await conditionsOf(agent.agentId)).toEqual([]);
    for (let i = 0; i < 3; i++) {
      await tick(100);
      await beatTask(0.1);
    }
    const a = await f.coordinator.getAgent(ADMIN, agent.agentId);
    expect(a.status).toBe('stalled');
    expect(a.conditions[0]).toMatchObject({
      condition: 'progress_stalled',
      taskId: t.id,
      since: movedAt + 5000,
      evidence: { taskId: t.id, thresholdMs: 5000 },
    });
    expect(startedAt).toBeLessThanOrEqual(movedAt);
    await beatTask(0.2);
    expect((await f.coordinator.getAgent(ADMIN, agent.agentId)).status).toBe('running');
    expect(conditionEvents(f.events)).toEqual(['opened:progress_stalled', 'closed:progress_stalled']);
  });

  it("monitor mode: the policy's progress_field in heartbeat metadata is the stall clock", async () => {
    f = await withPolicies(`
policies:
  - name: loops
    agent_type: loop
    heartbeat: { expected_interval: 1s }
    stall_detection: { progress_field: step_progress, stall_threshold: 4s }
`);
    const { agent } = await registerAs('loop');
    await beat(agent, { status: 'running', metadata: { step_progress: 1, other: 'x' } });
    const at = f.clock.now();
    for (let i = 0; i < 39; i++) {
      await tick(100);
      if (i % 9 === 8)
        await beat(agent, { status: 'running', metadata: { step_progress: 1, other: `x${i}` } });
    }
    expect(await conditionsOf(agent.agentId)).toEqual([]);
    await tick(200); // no heartbeat needed: the exact timer fires at the threshold
    const a = await f.coordinator.getAgent(ADMIN, agent.agentId);
    expect(a.conditions[0]).toMatchObject({ condition: 'progress_stalled', since: at + 4000, taskId: null });
    expect(a.conditions[0]?.evidence).toMatchObject({ progress: 1, thresholdMs: 4000 });
    await beat(agent, { status: 'running', metadata: { step_progress: 2 } });
    expect(await conditionsOf(agent.agentId)).toEqual([]);
  });

  it('a rate-limited dependency: the agent is at_risk, tasks requiring it wait, all clear when the time passes', async () => {
    f = await withPolicies(FAST);
    const { agent } = await registerAs('fast', { requires: ['openai'] });
    const other = (await registerAs('fast')).agent;
    await f.create({ requires: ['openai'] });
    await beat(agent, {
      status: 'running',
      dependencies: [{ name: 'openai', state: 'rate_limited', retryAfterMs: 20_000 }],
    });
    const a = await f.coordinator.getAgent(ADMIN, agent.agentId);
    expect(a.status).toBe('at_risk');
    expect(a.conditions[0]).toMatchObject({
      condition: 'dependency_down',
      evidence: { dependencies: [{ name: 'openai', state: 'rate_limited' }] },
    });
    expect((await f.coordinator.claim(other.caller, other.agentId, { types: ['t'] })).tasks).toEqual([]);
    for (let i = 0; i < 19; i++) {
      await tick(1000);
      await beat(agent, { status: 'running' });
    }
    expect(await conditionsOf(agent.agentId)).toEqual(['dependency_down']);
    await tick(1000);
    await beat(agent, { status: 'running' });
    expect(await conditionsOf(agent.agentId)).toEqual([]);
    expect((await f.coordinator.claim(other.caller, other.agentId, { types: ['t'] })).tasks).toHaveLength(1);
  });

  it('a dependency reported up again clears the condition at once', async () => {
    f = await withPolicies(FAST);
    const { agent } = await registerAs('fast', { requires: ['db'] });
    await beat(agent, { status: 'running', dependencies: [{ name: 'db', state: 'down' }] });
    expect(await conditionsOf(agent.agentId)).toEqual(['dependency_down']);
    await beat(agent, { status: 'running', dependencies: [{ name: 'db', state: 'up' }] });
    expect(await conditionsOf(agent.agentId)).toEqual([]);
  });

  it('error_persisting opens once the agent has reported error for longer than error_timeout', async () => {
    f = await withPolicies(FAST);
    const { agent } = await registerAs('fast');
    await beat(agent, { status: 'error', statusMessage: 'auth failed' });
    const since = f.clock.now();
    for (let i = 0; i < 19; i++) {
      await tick(1000);
      await beat(agent, { status: 'error', statusMessage: 'auth failed' });
    }
    expect(await conditionsOf(agent.agentId)).toEqual([]);
    await tick(1000);
    await beat(agent, { status: 'error', statusMessage: 'auth failed' });
    const a = await f.coordinator.getAgent(ADMIN, agent.agentId);
    expect(a.status).toBe('error');
    expect(a.conditions[0]).toMatchObject({
      condition: 'error_persisting',
      since: since + 20_000,
      evidence: { message: 'auth failed' },
    });
    await beat(agent, { status: 'running' });
    expect(await conditionsOf(agent.agentId)).toEqual([]);
  });

  it('resource_runaway: RSS above its limit, and RSS rising steadily', async () => {
    f = await withPolicies(`
policies:
  - name: leaky
    agent_type: leaky
    heartbeat: { expected_interval: 1s }
    resources: { rss_limit: 1GiB, rss_growth: 10MiB, rss_window: 30s }
`);
    const { agent } = await registerAs('leaky');
    const MiB = 1024 * 1024;
    let rss = 100 * MiB;
    for (let i = 0; i < 30; i++) {
      await beat(agent, { status: 'running', metrics: { rssBytes: rss, cpuPercent: 5 } });
      rss += 1 * MiB; // 60 MiB a minute
      await tick(1000, 500);
    }
    const a = await f.coordinator.getAgent(ADMIN, agent.agentId);
    expect(a.status).toBe('at_risk');
    expect(a.conditions[0]).toMatchObject({
      condition: 'resource_runaway',
      evidence: { rule: 'rss_growth' },
    });
    // Another agent, flat but above the limit.
    const big = (await registerAs('leaky')).agent;
    await beat(big, { status: 'running', metrics: { rssBytes: 512 * MiB } });
    expect(await conditionsOf(big.agentId)).toEqual([]);
    await tick(1000, 500);
    await beat(big, { status: 'running', metrics: { rssBytes: 2 * 1024 * MiB } });
    expect((await f.coordinator.getAgent(ADMIN, big.agentId)).conditions[0]).toMatchObject({
      condition: 'resource_runaway',
      evidence: { rule: 'rss_limit' },
    });
  });
});

describe('identity', () => {
  it('registering again with the same key: same id, incarnation 2, old token refused, old tasks timed out at once and retried', async () => {
    f = await withPolicies(FAST);
    const first = await registerAs('fast', { key: 'host-3/reviewer-1' });
    const t = await f.running(first.agent);
    const second = await registerAs('fast', { key: 'host-3/reviewer-1' });
    expect(second.registration).toMatchObject({ incarnation: 2, agent: { id: first.agent.agentId } });
    expect(await f.coordinator.authenticate(first.agent.token)).toBeNull();
    expect(await f.coordinator.authenticate(second.agent.token)).toEqual(second.agent.caller);
    const released = await f.task(t.id);
    expect(released).toMatchObject({ status: 'timeout', nextAttemptAt: expect.any(Number) as number });
    expect(released.nextAttemptAt).toBeLessThanOrEqual(f.clock.now());
    const events = await f.coordinator.listTaskEvents(ADMIN, t.id);
    expect(events.at(-1)).toMatchObject({ to: 'timeout', reason: 'agent_replaced' });
    // The old incarnation's writes are refused: its heartbeat (401) and its late result.
    await expect(beat(first.agent)).rejects.toMatchObject({ code: 'unauthorized' });
    await expect(
      f.coordinator.completeTask(first.agent.caller, t.id, { version: t.version }),
    ).rejects.toMatchObject({ code: 'invalid_transition' });
    // The task goes to the new incarnation (or anyone) on the next claim; the old result stays fenced.
    const again = await f.coordinator.claim(second.agent.caller, second.agent.agentId, { types: ['t'] });
    expect(again.tasks.map((x) => [x.id, x.attempt])).toEqual([[t.id, 2]]);
    await expect(
      f.coordinator.completeTask(first.agent.caller, t.id, { version: t.version }),
    ).rejects.toMatchObject({ code: 'stale_version' });
  });
});

describe('a held task past its budget (metrics.budgets)', () => {
  it('opens resource_runaway for the task with the spend as evidence, and closes it when no longer reported past the limit', async () => {
    f = await withPolicies(FAST);
    const { agent } = await registerAs('fast');
    const t = await f.running(agent);
    const beatSpend = (used: number | null) =>
      beat(agent, {
        status: 'running',
        metrics: {
          rssBytes: 1,
          ...(used === null
            ? {}
            : { budgets: [{ taskId: t.id, kind: 'tokens' as const, limit: 1000, used }] }),
        },
        tasks: [{ taskId: t.id, version: t.version, progress: 0.5 }],
      });
    await beatSpend(400);
    expect(await conditionsOf(agent.agentId)).toEqual([]);
    await tick(100);
    await beatSpend(1400);
    const a = await f.coordinator.getAgent(ADMIN, agent.agentId);
    expect(a.status).toBe('at_risk');
    expect(a.conditions).toEqual([
      expect.objectContaining({
        condition: 'resource_runaway',
        taskId: t.id,
        evidence: { rule: 'task_budget', taskId: t.id, kind: 'tokens', limit: 1000, used: 1400 },
      }),
    ]);
    await tick(100);
    await beatSpend(null); // the agent stopped reporting it (its task ended, say)
    expect(await conditionsOf(agent.agentId)).toEqual([]);
    expect(conditionEvents(f.events)).toEqual(['opened:resource_runaway', 'closed:resource_runaway']);
    const [closed] = await f.coordinator.listConditions(ADMIN, { agentId: agent.agentId, open: false });
    expect(closed).toMatchObject({
      condition: 'resource_runaway',
      taskId: t.id,
      closeReason: 'back within its resource limits',
    });
  });
});
