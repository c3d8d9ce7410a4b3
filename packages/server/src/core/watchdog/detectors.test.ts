import { describe, expect, it } from 'vitest';
import type { DependencyView } from '../diagnosis.js';
import { DEFAULT_POLICY, type ResolvedPolicy } from '../policies/resolved-policy.js';
import {
  type AgentWatchState,
  type EvaluateAgentInput,
  evaluateAgent,
  type HeldTaskWatch,
} from './detectors.js';
import { type MetricSample, SampleRing } from './samples.js';

const T0 = 1_700_000_000_000;
const S = 1000;
const MIN = 60 * S;
const GiB = 1024 ** 3;

function policy(patch: Partial<ResolvedPolicy> = {}): ResolvedPolicy {
  return { ...DEFAULT_POLICY, ...patch };
}

/** An agent's watch state; its samples given as tuples. */
function agent(
  patch: Partial<Omit<AgentWatchState, 'samples'>> & { samples?: readonly MetricSample[] } = {},
): AgentWatchState {
  const { samples = [], ...rest } = patch;
  return {
    startedAt: T0,
    reportedStatus: 'running',
    reportedStatusSince: T0,
    statusMessage: null,
    progress: null,
    phase: null,
    progressChangedAt: null,
    requires: [],
    ...rest,
    samples: SampleRing.of(samples),
  };
}

function task(patch: Partial<HeldTaskWatch> = {}): HeldTaskWatch {
  return {
    taskId: 'tsk_1',
    progress: 0.2,
    phase: 'tests',
    progressChangedAt: T0,
    stallTimeoutMs: 2 * MIN,
    requires: [],
    ...patch,
  };
}

function evaluate(now: number, patch: Partial<EvaluateAgentInput> = {}) {
  return evaluateAgent({
    now,
    policy: policy(),
    agent: agent(),
    tasks: [],
    dependencies: new Map(),
    iterationBaseline: null,
    ...patch,
  });
}

describe('evaluateAgent: a healthy agent', () => {
  it('opens nothing and has nothing to wait for', () => {
    expect(evaluate(T0 + 10 * MIN)).toEqual({ open: [], nextCheckAt: null });
  });
});

describe('evaluateAgent: the quiet period', () => {
  const quiet = policy({ quietPeriodMs: 2 * MIN });
  const stalled = agent({
    progress: 0.1,
    progressChangedAt: T0 - 10 * MIN,
    reportedStatusSince: T0 - 10 * MIN,
  });
  const down = new Map<string, DependencyView>([
    ['openai', { state: 'down', until: null, since: T0 - MIN, reportedBy: 'agt_2' }],
  ]);

  it('opens nothing before it ends and asks to be woken when it ends', () => {
    const r = evaluate(T0 + MIN, {
      policy: quiet,
      agent: { ...stalled, requires: ['openai'] },
      dependencies: down,
    });
    expect(r).toEqual({ open: [], nextCheckAt: T0 + 2 * MIN });
  });
  it('after it, conditions that held during it open, since its end', () => {
    const r = evaluate(T0 + 2 * MIN, {
      policy: quiet,
      agent: { ...stalled, requires: ['openai'] },
      dependencies: down,
    });
    expect(r.open.map((c) => [c.condition, c.since])).toEqual([
      ['progress_stalled', T0 + 2 * MIN],
      ['dependency_down', T0 + 2 * MIN],
    ]);
  });
  it('a clock that went back before startedAt opens nothing and does not throw', () => {
    expect(evaluate(T0 - 5 * MIN, { agent: stalled })).toEqual({ open: [], nextCheckAt: T0 });
  });
});

describe("evaluateAgent: progress_stalled (the agent's own progress)", () => {
  const threshold = DEFAULT_POLICY.stallDetection.stallThresholdMs; // 5 min
  const a = agent({ progress: 0.4, phase: 'crawl', progressChangedAt: T0 + MIN });

  it('waits for the threshold, then opens since progressChangedAt + threshold with readable evidence', () => {
    expect(evaluate(T0 + 3 * MIN, { agent: a })).toEqual({ open: [], nextCheckAt: T0 + MIN + threshold });
    const r = evaluate(T0 + 8 * MIN, { agent: a });
    expect(r.open).toEqual([
      {
        condition: 'progress_stalled',
        since: T0 + MIN + threshold,
        taskId: null,
        evidence: {
          taskId: null,
          progress: 0.4,
          phase: 'crawl',
          progressField: null,
          unchangedSinceAt: T0 + MIN,
          unchangedForMs: 7 * MIN,
          thresholdMs: threshold,
        },
      },
    ]);
    expect(r.nextCheckAt).toBeNull();
  });
  it('opens exactly at the threshold (the timer fires at nextCheckAt)', () => {
    expect(evaluate(T0 + MIN + threshold, { agent: a }).open).toHaveLength(1);
    expect(evaluate(T0 + MIN + threshold - 1, { agent: a }).open).toHaveLength(0);
  });
  it('needs progress reported at least once', () => {
    expect(evaluate(T0 + 60 * MIN, { agent: agent({ progressChangedAt: null }) }).open).toEqual([]);
  });
  it('only while it reports running; the clock restarts when it starts running', () => {
    for (const reportedStatus of ['idle', 'terminating'] as const) {
      expect(evaluate(T0 + 60 * MIN, { agent: { ...a, reportedStatus } }).open).toEqual([]);
    }
    const resumed = { ...a, reportedStatusSince: T0 + 30 * MIN };
    expect(evaluate(T0 + 33 * MIN, { agent: resumed })).toEqual({ open: [], nextCheckAt: T0 + 35 * MIN });
    expect(evaluate(T0 + 35 * MIN, { agent: resumed }).open[0]!.evidence.unchangedSinceAt).toBe(
      T0 + 30 * MIN,
    );
  });
  it('a clock earlier than progressChangedAt opens nothing and does not throw', () => {
    expect(evaluate(T0 + 30 * S, { agent: a })).toEqual({ open: [], nextCheckAt: T0 + MIN + threshold });
  });
  it('a clock that jumps far forward opens it, since the threshold (not now)', () => {
    const r = evaluate(T0 + 1000 * MIN, { agent: a });
    expect(r.open[0]).toMatchObject({ since: T0 + MIN + threshold, evidence: { unchangedForMs: 999 * MIN } });
  });
  it('is off when the policy disables stall detection', () => {
    const off = policy({ stallDetection: { ...DEFAULT_POLICY.stallDetection, enabled: false } });
    expect(evaluate(T0 + 60 * MIN, { agent: a, policy: off, tasks: [task()] })).toEqual({
      open: [],
      nextCheckAt: null,
    });
  });
});

describe('evaluateAgent: progress_stalled (held tasks)', () => {
  const tasks = [
    task({ taskId: 'tsk_a', progressChangedAt: T0 }),
    task({ taskId: 'tsk_b', progressChangedAt: T0 + MIN, stallTimeoutMs: 5 * MIN }),
    task({ taskId: 'tsk_c', progressChangedAt: null }),
  ];
  it('opens one condition per stalled task, and waits for the others', () => {
    const r = evaluate(T0 + 3 * MIN, { tasks, agent: agent({ reportedStatus: 'idle' }) });
    expect(r.open).toEqual([
      {
        condition: 'progress_stalled',
        since: T0 + 2 * MIN,
        taskId: 'tsk_a',
        evidence: {
          taskId: 'tsk_a',
          progress: 0.2,
          phase: 'tests',
          unchangedSinceAt: T0,
          unchangedForMs: 3 * MIN,
          thresholdMs: 2 * MIN,
        },
      },
    ]);
    expect(r.nextCheckAt).toBe(T0 + 6 * MIN);
    const later = evaluate(T0 + 6 * MIN, { tasks });
    expect(later.open.map((c) => c.taskId)).toEqual(['tsk_a', 'tsk_b']);
  });
});

describe('evaluateAgent: dependency_down', () => {
  const deps = new Map<string, DependencyView>([
    ['openai', { state: 'rate_limited', until: T0 + 5 * MIN, since: T0 + MIN, reportedBy: 'agt_2' }],
    ['github', { state: 'down', until: null, since: T0 + 2 * MIN, reportedBy: null }],
    ['s3', { state: 'up', until: null, since: T0, reportedBy: 'agt_9' }],
    ['slack', { state: 'down', until: T0 + MIN, since: T0, reportedBy: 'agt_3' }],
  ]);
  const withNeeds = {
    agent: agent({ requires: ['openai', 's3'] }),
    policy: policy({ dependencies: ['github', 'slack', 'openai'] }),
    tasks: [task({ requires: ['github', 'unknown_dep'], progressChangedAt: null })],
    dependencies: deps,
  };

  it('lists every needed dependency that is unavailable now, who needs it, and wakes up at the first until', () => {
    const r = evaluate(T0 + 3 * MIN, withNeeds);
    expect(r.open).toEqual([
      {
        condition: 'dependency_down',
        since: T0 + MIN,
        taskId: null,
        evidence: {
          dependencies: [
            {
              name: 'github',
              state: 'down',
              until: null,
              since: T0 + 2 * MIN,
              reportedBy: null,
              neededBy: ['policy', 'tsk_1'],
            },
            {
              name: 'openai',
              state: 'rate_limited',
              until: T0 + 5 * MIN,
              since: T0 + MIN,
              reportedBy: 'agt_2',
              neededBy: ['agent', 'policy'],
            },
          ],
        },
      },
    ]);
    expect(r.nextCheckAt).toBe(T0 + 5 * MIN);
  });
  it("past a dependency's until it is available again", () => {
    const r = evaluate(T0 + 5 * MIN, withNeeds);
    expect((r.open[0]!.evidence.dependencies as { name: string }[]).map((d) => d.name)).toEqual(['github']);
    expect(r.nextCheckAt).toBeNull();
  });
  it('nothing when nothing needed is down', () => {
    expect(
      evaluate(T0 + 3 * MIN, { dependencies: deps, agent: agent({ requires: ['s3', 'nope'] }) }).open,
    ).toEqual([]);
  });
});

describe('evaluateAgent: resource_runaway', () => {
  const limits = {
    ...DEFAULT_POLICY.resources,
    rssLimitBytes: 4 * GiB,
    cpuPercent: 90,
    cpuWindowMs: 5 * MIN,
  };
  const p = policy({ resources: limits });
  const samples: MetricSample[] = Array.from({ length: 40 }, (_, i) => [
    T0 + i * 10 * S,
    i >= 30 ? 5 * GiB : 3 * GiB,
    i >= 5 ? 99 : 10,
    null,
  ]);

  it('one condition: the first rule that holds gives the evidence, the others are listed under also', () => {
    const now = T0 + 400 * S; // CPU high since T0 + 50 s, for 350 s > 5 min; RSS above since T0 + 300 s
    const r = evaluate(now, { policy: p, agent: agent({ samples }) });
    expect(r.open).toHaveLength(1);
    const c = r.open[0]!;
    expect(c.condition).toBe('resource_runaway');
    expect(c.since).toBe(T0 + 300 * S);
    expect(c.evidence).toMatchObject({
      rule: 'rss_limit',
      rssBytes: 5 * GiB,
      also: [{ rule: 'cpu_pinned', pinnedSinceAt: T0 + 50 * S }],
    });
  });
  it('asks to be woken when the CPU window fills, and opens then', () => {
    const cpuOnly = policy({ resources: { ...limits, rssLimitBytes: null } });
    const early = samples.slice(0, 20); // last at T0 + 190 s
    const r = evaluate(T0 + 200 * S, { policy: cpuOnly, agent: agent({ samples: early }) });
    expect(r).toEqual({ open: [], nextCheckAt: T0 + 50 * S + 5 * MIN });
    expect(
      evaluate(T0 + 350 * S, { policy: cpuOnly, agent: agent({ samples: early }) }).open[0],
    ).toMatchObject({
      condition: 'resource_runaway',
      since: T0 + 350 * S,
      evidence: { rule: 'cpu_pinned' },
    });
  });
  it('a held task that progressed holds cpu_pinned back', () => {
    const cpuOnly = policy({ resources: { ...limits, rssLimitBytes: null } });
    const busy = [task({ progressChangedAt: T0 + 380 * S, stallTimeoutMs: 10 * MIN })];
    const r = evaluate(T0 + 400 * S, { policy: cpuOnly, agent: agent({ samples }), tasks: busy });
    expect(r).toEqual({ open: [], nextCheckAt: T0 + 380 * S + 5 * MIN });
  });
  it('iteration_slow uses the type baseline given', () => {
    const it2 = policy({ resources: { ...DEFAULT_POLICY.resources, iterationFactor: 2 } });
    const slow: MetricSample[] = [[T0 + 10 * S, null, null, 50_000]];
    const r = evaluate(T0 + 20 * S, {
      policy: it2,
      agent: agent({ samples: slow }),
      iterationBaseline: { p95Ms: 10_000, count: 500 },
    });
    expect(r.open[0]).toMatchObject({
      condition: 'resource_runaway',
      since: T0 + 10 * S,
      evidence: { rule: 'iteration_slow', limitMs: 20_000 },
    });
    expect(evaluate(T0 + 20 * S, { policy: it2, agent: agent({ samples: slow }) }).open).toEqual([]);
  });
});

describe('evaluateAgent: error_persisting', () => {
  const erring = agent({
    reportedStatus: 'error',
    reportedStatusSince: T0 + MIN,
    statusMessage: 'ECONNRESET from the model API',
  });
  it('opens once it has reported error for errorTimeoutMs, with since, timeout and message', () => {
    expect(evaluate(T0 + 3 * MIN, { agent: erring })).toEqual({ open: [], nextCheckAt: T0 + 6 * MIN });
    expect(evaluate(T0 + 7 * MIN, { agent: erring }).open).toEqual([
      {
        condition: 'error_persisting',
        since: T0 + 6 * MIN,
        taskId: null,
        evidence: {
          since: T0 + MIN,
          forMs: 6 * MIN,
          timeoutMs: 5 * MIN,
          message: 'ECONNRESET from the model API',
        },
      },
    ]);
  });
  it('is off with error_timeout null, and does not open for other statuses', () => {
    expect(evaluate(T0 + 60 * MIN, { agent: erring, policy: policy({ errorTimeoutMs: null }) })).toEqual({
      open: [],
      nextCheckAt: null,
    });
    expect(evaluate(T0 + 60 * MIN, { agent: { ...erring, reportedStatus: 'idle' } }).open).toEqual([]);
  });
  it('a clock that went back to before the error opens nothing', () => {
    expect(evaluate(T0 + 30 * S, { agent: erring })).toEqual({ open: [], nextCheckAt: T0 + 6 * MIN });
  });
});

describe('evaluateAgent: several at once', () => {
  it('returns every open condition in kind order, and the earliest future check', () => {
    const r = evaluate(T0 + 10 * MIN, {
      agent: agent({
        reportedStatus: 'error',
        reportedStatusSince: T0 + 8 * MIN,
        statusMessage: 'boom',
        requires: ['openai'],
      }),
      tasks: [task({ progressChangedAt: T0 }), task({ taskId: 'tsk_2', progressChangedAt: T0 + 9 * MIN })],
      dependencies: new Map([
        ['openai', { state: 'down', until: T0 + 12 * MIN, since: T0 + 7 * MIN, reportedBy: null }],
      ]),
    });
    expect(r.open.map((c) => [c.condition, c.taskId])).toEqual([
      ['progress_stalled', 'tsk_1'],
      ['dependency_down', null],
    ]);
    // tsk_2 stalls at T0 + 11 min, openai is back at 12 min, the error persists at 13 min
    expect(r.nextCheckAt).toBe(T0 + 11 * MIN);
  });
});

describe('evaluateAgent: a held task past its budget', () => {
  const now = T0 + 10 * MIN;
  const budgets = (...b: { taskId: string; used: number; limit?: number }[]) =>
    b.map(({ taskId, used, limit = 1000 }) => ({ taskId, kind: 'tokens' as const, limit, used }));

  it('opens resource_runaway for that task with the spend as evidence', () => {
    const r = evaluate(now, {
      agent: agent({ metrics: { rssBytes: 1, budgets: budgets({ taskId: 'tsk_1', used: 1400 }) } }),
      tasks: [task({ progressChangedAt: now })],
    });
    expect(r.open).toEqual([
      {
        condition: 'resource_runaway',
        since: now,
        taskId: 'tsk_1',
        evidence: { rule: 'task_budget', taskId: 'tsk_1', kind: 'tokens', limit: 1000, used: 1400 },
      },
    ]);
  });

  it('opens nothing within the limit, for a task it no longer holds, or with no report', () => {
    const held = [task({ progressChangedAt: now })];
    const at = (metrics: AgentWatchState['metrics']) =>
      evaluate(now, { agent: agent({ metrics }), tasks: held }).open;
    expect(at({ budgets: budgets({ taskId: 'tsk_1', used: 1000 }) })).toEqual([]);
    expect(at({ budgets: budgets({ taskId: 'tsk_gone', used: 5000 }) })).toEqual([]);
    expect(at({ rssBytes: 1 })).toEqual([]);
    expect(at(null)).toEqual([]);
    expect(at(undefined)).toEqual([]);
  });

  it('one condition per task past its budget (the first report of a task counts), none in the quiet period', () => {
    const metrics = {
      budgets: [
        ...budgets({ taskId: 'tsk_1', used: 10 }, { taskId: 'tsk_2', used: 2000 }),
        { taskId: 'tsk_2', kind: 'turns' as const, limit: 3, used: 4 },
        { taskId: 'tsk_1', kind: 'cost_usd' as const, limit: 0.5, used: 0.75 },
      ],
    };
    const tasks = [task({ progressChangedAt: now }), task({ taskId: 'tsk_2', progressChangedAt: now })];
    const r = evaluate(now, { agent: agent({ metrics }), tasks });
    expect(r.open.map((c) => [c.taskId, c.evidence.kind, c.evidence.used])).toEqual([
      ['tsk_2', 'tokens', 2000],
      ['tsk_1', 'cost_usd', 0.75],
    ]);
    const quiet = evaluate(now, {
      policy: policy({ quietPeriodMs: 20 * MIN }),
      agent: agent({ metrics }),
      tasks,
    });
    expect(quiet.open).toEqual([]);
  });
});
