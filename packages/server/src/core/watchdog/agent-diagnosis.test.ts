import type { Agent, AgentCondition } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, type ResolvedPolicy } from '../policies/resolved-policy.js';
import { diagnoseAgent } from './agent-diagnosis.js';

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
const S = 1000;
const MIN = 60 * S;
const GiB = 1024 ** 3;

function agent(patch: Partial<Agent> = {}): Agent {
  return {
    id: 'agt_1',
    key: 'host-3/reviewer-2',
    incarnation: 2,
    agentType: 'llm_chain',
    name: 'reviewer-2',
    host: 'host-3',
    pid: 4242,
    taskTypes: ['review'],
    labels: {},
    requires: [],
    supervisorId: null,
    policy: 'default',
    status: 'running',
    reportedStatus: 'running',
    statusMessage: null,
    conditions: [],
    registeredAt: T0 - 60 * MIN,
    startedAt: T0,
    lastHeartbeatAt: T0 + 10 * MIN - 2 * S,
    leaseExpiresAt: T0 + 10 * MIN + 13 * S,
    heartbeatIntervalMs: 5000,
    lastPollAt: null,
    lastPollTypes: [],
    metrics: null,
    metadata: null,
    progress: null,
    phase: null,
    progressChangedAt: null,
    endedAt: null,
    currentTaskIds: [],
    ...patch,
  };
}

const condition = (c: Partial<AgentCondition> & Pick<AgentCondition, 'condition'>): AgentCondition => ({
  since: T0,
  taskId: null,
  evidence: {},
  ...c,
});

function diagnose(a: Agent, now = T0 + 10 * MIN, policy: ResolvedPolicy = DEFAULT_POLICY) {
  return diagnoseAgent({ agent: a, now, policy });
}

describe('diagnoseAgent', () => {
  it('healthy: says it heartbeats and nothing is wrong', () => {
    const d = diagnose(agent({ currentTaskIds: ['tsk_1'] }));
    expect(d).toMatchObject({ agentId: 'agt_1', status: 'running', at: T0 + 10 * MIN, suggestions: [] });
    expect(d.reasons.map((r) => r.code)).toEqual(['healthy']);
    expect(d.summary).toBe(
      'Agent reviewer-2 (agt_1) is running: it is running with 1 task(s), heartbeats (last 2s ago, every 5s) and no detector sees a problem.',
    );
  });

  it('lost: how long it has been silent against its timeout, and where to look', () => {
    const a = agent({
      status: 'lost',
      lastHeartbeatAt: T0 + 10 * MIN - 42 * S,
      leaseExpiresAt: null,
      conditions: [condition({ condition: 'heartbeat_timeout', since: T0 + 10 * MIN - 27 * S })],
    });
    const d = diagnose(a);
    expect(d.reasons[0]).toMatchObject({
      code: 'heartbeat_timeout',
      since: T0 + 10 * MIN - 27 * S,
      details: { silentForMs: 42_000, timeoutMs: 15_000, host: 'host-3', pid: 4242 },
    });
    expect(d.summary).toBe(
      'Agent reviewer-2 (agt_1) is lost: no heartbeat for 42s (timeout 15s): the process died or hangs.',
    );
    expect(d.suggestions).toEqual([
      'check the process on host-3 (pid 4242): is it alive, is it stuck?',
      'or restart it: POST /v1/agents/agt_1/commands {"type":"restart"}',
    ]);
  });

  it('lost before its first heartbeat: the startup timeout', () => {
    const d = diagnose(
      agent({
        status: 'lost',
        lastHeartbeatAt: null,
        supervisorId: 'sup_host-3',
        conditions: [condition({ condition: 'heartbeat_timeout', since: T0 + 30 * S })],
      }),
      T0 + MIN,
    );
    expect(d.reasons.map((r) => r.code)).toEqual(['heartbeat_timeout']);
    expect(d.reasons[0]!.message).toBe(
      'it has sent no heartbeat since it registered at 2026-01-15T12:00:00.000Z (startup timeout 30s): the process died or hangs before its first beat',
    );
    expect(d.suggestions).toContain('its supervisor sup_host-3 restarts it if it exited');
  });

  it('never_heartbeat: registered, no heartbeat yet, with when the startup timeout ends', () => {
    const d = diagnose(agent({ lastHeartbeatAt: null, status: 'idle', reportedStatus: 'idle' }), T0 + 10 * S);
    expect(d.reasons).toEqual([
      {
        code: 'never_heartbeat',
        since: T0,
        message:
          'it registered at 2026-01-15T12:00:00.000Z and has sent no heartbeat yet; it is lost unless one arrives by 2026-01-15T12:00:30.000Z (in 20s)',
        details: { registeredAt: T0, startupTimeoutMs: 30_000, deadline: T0 + 30 * S, inMs: 20_000 },
      },
    ]);
    expect(d.suggestions).toEqual(['nothing to do yet: its first heartbeat is due']);
  });

  it('in_quiet_period: until when detectors hold off', () => {
    const d = diagnose(agent(), T0 + 30 * S, { ...DEFAULT_POLICY, quietPeriodMs: 2 * MIN });
    expect(d.reasons.map((r) => r.code)).toEqual(['in_quiet_period']);
    expect(d.reasons[0]!.message).toMatch(
      /quiet period until 2026-01-15T12:02:00.000Z \(in 1m30s\): detectors hold off$/,
    );
  });

  it("stalled: the agent's own progress first, then held tasks, then the rest", () => {
    const a = agent({
      status: 'stalled',
      conditions: [
        condition({
          condition: 'dependency_down',
          since: T0 + MIN,
          evidence: {
            dependencies: [
              {
                name: 'openai',
                state: 'down',
                until: null,
                since: T0,
                reportedBy: 'agt_2',
                neededBy: ['agent'],
              },
            ],
          },
        }),
        condition({
          condition: 'progress_stalled',
          since: T0 + 4 * MIN,
          taskId: 'tsk_9',
          evidence: {
            taskId: 'tsk_9',
            progress: 0.2,
            phase: 'tests',
            unchangedSinceAt: T0 + 2 * MIN,
            thresholdMs: 2 * MIN,
          },
        }),
        condition({
          condition: 'progress_stalled',
          since: T0 + 6 * MIN,
          evidence: {
            taskId: null,
            progress: 0.4,
            phase: 'crawl',
            progressField: 'step_progress',
            unchangedSinceAt: T0 + MIN,
            thresholdMs: 5 * MIN,
          },
        }),
      ],
    });
    const d = diagnose(a);
    expect(d.reasons.map((r) => [r.code, r.details.taskId])).toEqual([
      ['progress_stalled', null],
      ['progress_stalled', 'tsk_9'],
      ['dependency_down', null],
    ]);
    expect(d.reasons.map((r) => r.message)).toEqual([
      'heartbeats arrive but its step_progress (0.4, phase "crawl") has not changed for 9m (threshold 5m)',
      'heartbeats arrive but held task tsk_9 has not progressed for 8m (stall timeout 2m, progress 0.2, phase "tests")',
      'it needs openai, which is down, reported by agt_2',
    ]);
    expect(d.summary).toMatch(
      /^Agent reviewer-2 \(agt_1\) is stalled: heartbeats arrive .* \(2 more reasons below\)\.$/,
    );
    expect(d.suggestions).toEqual([
      'wake it: POST /v1/agents/agt_1/commands {"type":"wake"}',
      'if it stays stuck, restart it: POST /v1/agents/agt_1/commands {"type":"restart"}',
      'see why the task is stuck: rouse why tsk_9',
      'read its output: rouse logs tsk_9',
      'wait for openai to recover, or report it up: POST /v1/dependencies/openai/reports {"state":"up"}',
    ]);
  });

  it('error: a reported error without error_persisting, then with it (which ranks as the error)', () => {
    const erring = agent({ status: 'error', reportedStatus: 'error', statusMessage: 'ECONNRESET' });
    const d1 = diagnose(erring);
    expect(d1.reasons.map((r) => r.code)).toEqual(['reported_error']);
    expect(d1.summary).toBe(
      'Agent reviewer-2 (agt_1) is error: it reports an error: "ECONNRESET"; error_persisting opens if it lasts 5m.',
    );
    const d2 = diagnose({
      ...erring,
      conditions: [
        condition({ condition: 'dependency_down', evidence: { dependencies: [] } }),
        condition({
          condition: 'error_persisting',
          since: T0 + 6 * MIN,
          evidence: { since: T0 + MIN, forMs: 5 * MIN, timeoutMs: 5 * MIN, message: 'ECONNRESET' },
        }),
      ],
    });
    expect(d2.reasons.map((r) => r.code)).toEqual(['error_persisting', 'dependency_down']);
    expect(d2.reasons[0]!.message).toBe('it has reported an error for 9m (limit 5m): "ECONNRESET"');
  });

  it('at_risk: dependency_down before resource_runaway before error_persisting', () => {
    const a = agent({
      status: 'at_risk',
      conditions: [
        condition({ condition: 'error_persisting', evidence: { since: T0, timeoutMs: 5 * MIN } }),
        condition({
          condition: 'resource_runaway',
          evidence: { rule: 'rss_limit', rssBytes: 5.25 * GiB, rssLimitBytes: 4 * GiB },
        }),
        condition({
          condition: 'dependency_down',
          evidence: {
            dependencies: [
              { name: 'openai', state: 'rate_limited', until: T0 + 11 * MIN, reportedBy: 'agt_2' },
              { name: 'github', state: 'down', until: null, reportedBy: null },
            ],
          },
        }),
      ],
    });
    const d = diagnose(a);
    expect(d.reasons.map((r) => r.code)).toEqual(['dependency_down', 'resource_runaway', 'error_persisting']);
    expect(d.reasons[0]!.message).toBe(
      'it needs openai, which is rate_limited until 2026-01-15T12:11:00.000Z, reported by agt_2; and github, which is down',
    );
    expect(d.reasons[1]!.message).toBe('its memory (RSS 5.3 GiB) is above its limit of 4 GiB');
  });

  it('resource_runaway: each rule says what it saw', () => {
    const msg = (evidence: AgentCondition['evidence']) =>
      diagnose(
        agent({ status: 'at_risk', conditions: [condition({ condition: 'resource_runaway', evidence })] }),
      ).reasons[0]!.message;
    expect(
      msg({
        rule: 'rss_growth',
        slopeBytesPerMin: 60 * 1024 ** 2,
        r2: 0.97,
        rssGrowthBytesPerMin: 50 * 1024 ** 2,
        fromAt: T0,
        toAt: T0 + 10 * MIN,
        firstRssBytes: GiB,
        lastRssBytes: 1.6 * GiB,
      }),
    ).toBe(
      'its memory grows steadily by 60 MiB/min over 10m (limit 50 MiB/min, fit r² 0.97), from 1 GiB to 1.6 GiB',
    );
    expect(
      msg({
        rule: 'cpu_pinned',
        cpuPercentThreshold: 90,
        pinnedSinceAt: T0 + MIN,
        windowMs: 5 * MIN,
        also: [{ rule: 'rss_limit' }],
      }),
    ).toBe(
      'its CPU has stayed above 90 % since 2026-01-15T12:01:00.000Z (window 5m) while its progress did not move (also: rss_limit)',
    );
    expect(
      msg({
        rule: 'iteration_slow',
        exceeded: 'baseline',
        iterationMs: 40_000,
        iterationFactor: 3,
        baselineP95Ms: 10_000,
        limitMs: 30_000,
      }),
    ).toBe('its last iteration took 40s, over 3 × the llm_chain p95 of 10s (30s)');
    expect(
      msg({ rule: 'iteration_slow', exceeded: 'max_iteration', iterationMs: 95_000, maxIterationMs: 90_000 }),
    ).toBe('its last iteration took 1m35s, over max_iteration 1m30s');
  });

  it('resource_runaway of a held task past its budget', () => {
    const budget = (evidence: AgentCondition['evidence']) =>
      diagnose(
        agent({
          status: 'at_risk',
          conditions: [condition({ condition: 'resource_runaway', taskId: 'tsk_9', evidence })],
        }),
      ).reasons[0]!;
    const tokens = budget({ rule: 'task_budget', taskId: 'tsk_9', kind: 'tokens', limit: 1000, used: 1400 });
    expect(tokens.message).toBe(
      'held task tsk_9 spent 1400 tokens, past its budget of 1000 tokens; the adapter stops it and fails it for good',
    );
    expect(
      budget({ rule: 'task_budget', taskId: 'tsk_9', kind: 'cost_usd', limit: 2, used: 2.5 }).message,
    ).toBe(
      'held task tsk_9 spent $2.5000, past its budget of $2.0000; the adapter stops it and fails it for good',
    );
  });

  it('terminating, left and terminated', () => {
    expect(diagnose(agent({ status: 'terminating', reportedStatus: 'terminating' })).summary).toBe(
      'Agent reviewer-2 (agt_1) is terminating: it reports that it is shutting down.',
    );
    const left = diagnose(agent({ status: 'left', endedAt: T0 + 5 * MIN, leaseExpiresAt: null }));
    expect(left.reasons.map((r) => r.code)).toEqual(['left']);
    expect(left.summary).toBe(
      'Agent reviewer-2 (agt_1) is left: it left (a graceful shutdown) at 2026-01-15T12:05:00.000Z.',
    );
    expect(left.suggestions).toEqual([
      'start it again if still needed: registering with key "host-3/reviewer-2" makes incarnation 3',
    ]);
    const terminated = diagnose(
      agent({
        status: 'terminated',
        endedAt: T0 + 5 * MIN,
        conditions: [condition({ condition: 'progress_stalled' })],
      }),
    );
    expect(terminated.reasons.map((r) => r.code)).toEqual(['terminated']);
    expect(terminated.suggestions).toEqual([
      'see what the watchdog did and why: GET /v1/interventions?agentId=agt_1',
    ]);
  });

  it('the first reason always matches the derived status', () => {
    const lostAndMore = agent({
      status: 'lost',
      reportedStatus: 'error',
      conditions: [
        condition({ condition: 'progress_stalled' }),
        condition({ condition: 'dependency_down', evidence: { dependencies: [] } }),
        condition({ condition: 'heartbeat_timeout' }),
      ],
    });
    expect(diagnose(lostAndMore).reasons.map((r) => r.code)).toEqual([
      'heartbeat_timeout',
      'progress_stalled',
      'reported_error',
      'dependency_down',
    ]);
  });
});
