import { DIAGNOSIS_CODES, type DiagnosisCode, type Task, type TaskEvent } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import {
  type DependencyView,
  type DiagnosisAgent,
  type DiagnosisInput,
  diagnose,
  isDependencyUnavailable,
} from './diagnosis.js';
import { taskFixture } from './task-fixture.js';

const NOW = 1_700_000_100_000;

const task = (over: Partial<Task> = {}): Task => taskFixture(NOW, over);

const polling: DiagnosisAgent = { id: 'agt_a', status: 'idle', lastPollAt: NOW - 1000, currentTaskIds: [] };

function input(t: Task, over: Partial<DiagnosisInput> = {}): DiagnosisInput {
  return {
    task: t,
    now: NOW,
    agents: [polling],
    queueAhead: 0,
    dependencies: new Map(),
    writeBackGraceMs: 30000,
    pollStaleAfterMs: 60000,
    ...over,
  };
}

const codes = (i: DiagnosisInput): DiagnosisCode[] => diagnose(i).reasons.map((r) => r.code);
const first = (i: DiagnosisInput) => diagnose(i).reasons[0]!;

const running = (over: Partial<Task> = {}) =>
  task({
    status: 'running',
    attempt: 1,
    version: 1,
    agentId: 'agt_a',
    claimedAt: NOW - 4000,
    startedAt: NOW - 4000,
    lastHeartbeatAt: NOW - 1000,
    leaseExpiresAt: NOW + 14000,
    ...over,
  });

describe('diagnose', () => {
  it('completed: finish time, attempt and how it completed', () => {
    const ev: TaskEvent = {
      seq: 3,
      at: NOW - 5,
      from: 'running',
      to: 'completed',
      version: 1,
      attempt: 1,
      actor: 'coordinator',
      reason: 'completed_from_result_ref',
      details: null,
    };
    const d = diagnose(
      input(task({ status: 'completed', attempt: 1, finishedAt: NOW - 5, final: true }), { lastEvent: ev }),
    );
    expect(d.reasons.map((r) => r.code)).toEqual(['completed']);
    expect(d.reasons[0]!.details).toMatchObject({
      finishedAt: NOW - 5,
      attempt: 1,
      via: 'completed_from_result_ref',
    });
    expect(d.reasons[0]!.since).toBe(NOW - 5);
    expect(d.summary).toMatch(/^Task tsk_1 is completed: it completed on attempt 1/);
    expect(d.status).toBe('completed');
    expect(d.at).toBe(NOW);
  });

  it('cancelled: who and why, from the last history entry', () => {
    const ev: TaskEvent = {
      seq: 2,
      at: NOW - 7,
      from: 'created',
      to: 'cancelled',
      version: 0,
      attempt: 0,
      actor: 'admin',
      reason: 'no longer needed',
      details: null,
    };
    const r = first(
      input(task({ status: 'cancelled', finishedAt: NOW - 7, final: true }), { lastEvent: ev }),
    );
    expect(r.code).toBe('cancelled');
    expect(r.details).toEqual({ finishedAt: NOW - 7, reason: 'no longer needed', actor: 'admin' });
    expect(r.message).toContain('cancelled by admin');
  });

  it('exhausted_attempts: final timeout or retryable failure with attempts used up', () => {
    const err = { code: 'heartbeat_timeout', message: 'no heartbeat', retryable: true };
    const t = task({
      status: 'timeout',
      attempt: 4,
      maxAttempts: 4,
      error: err,
      finishedAt: NOW - 1,
      final: true,
    });
    const d = diagnose(input(t));
    expect(d.reasons.map((r) => r.code)).toEqual(['exhausted_attempts']);
    expect(d.reasons[0]!.details).toMatchObject({
      attempt: 4,
      maxAttempts: 4,
      lastStatus: 'timeout',
      lastError: { code: 'heartbeat_timeout' },
    });
    expect(d.suggestions).toContain('run it once more: rouse retry tsk_1');
  });

  it('non_retryable_error: final failure with retryable false, even with attempts left', () => {
    const t = task({
      status: 'failed',
      attempt: 1,
      error: { code: 'bad_input', message: 'nope', retryable: false },
      final: true,
      finishedAt: NOW,
    });
    const r = first(input(t));
    expect(r.code).toBe('non_retryable_error');
    expect(r.details).toEqual({ error: { code: 'bad_input', message: 'nope' }, attempt: 1 });
    expect(diagnose(input(t)).suggestions.some((s) => s.includes('rouse retry tsk_1'))).toBe(true);
  });

  it('backoff_wait: next attempt time, remaining wait, attempt and last error', () => {
    const t = task({
      status: 'failed',
      attempt: 2,
      nextAttemptAt: NOW + 2000,
      finishedAt: NOW - 100,
      error: { code: 'e', message: 'm', retryable: true },
    });
    const d = diagnose(input(t));
    expect(d.reasons.map((r) => r.code)).toEqual(['backoff_wait']);
    expect(d.reasons[0]!.details).toMatchObject({
      nextAttemptAt: NOW + 2000,
      inMs: 2000,
      attempt: 2,
      maxAttempts: 4,
      lastError: { code: 'e', message: 'm' },
    });
  });

  it('backoff_wait also names blockers that will still stand (no agents)', () => {
    const t = task({ status: 'timeout', attempt: 1, nextAttemptAt: NOW + 1000 });
    expect(codes(input(t, { agents: [] }))).toEqual(['backoff_wait', 'no_agents_for_type']);
  });

  it('scheduled_later: runAt in the future', () => {
    const r = first(input(task({ runAt: NOW + 60_000 })));
    expect(r.code).toBe('scheduled_later');
    expect(r.details).toEqual({ runAt: NOW + 60_000, inMs: 60_000 });
  });

  it('claimable after backoff: treated like a new task', () => {
    const t = task({ status: 'timeout', attempt: 1, nextAttemptAt: NOW - 1 });
    expect(codes(input(t))).toEqual(['claimable_now']);
  });

  it('claimable_now: a polling agent with capacity and nothing ahead', () => {
    expect(codes(input(task()))).toEqual(['claimable_now']);
  });

  it('no_agents_for_type: nobody serves the type (left or terminated agents do not count)', () => {
    const gone: DiagnosisAgent = { id: 'agt_x', status: 'left', lastPollAt: NOW, currentTaskIds: [] };
    const d = diagnose(input(task(), { agents: [gone] }));
    expect(d.reasons.map((r) => r.code)).toEqual(['no_agents_for_type']);
    expect(d.reasons[0]!.details).toEqual({ type: 'codex', registeredAgents: 1 });
    expect(d.suggestions[0]).toContain('Worker with taskTypes: ["codex"]'); // the SDK option's name
  });

  it('agents_not_polling: live agents whose last poll is stale, with the latest poll time', () => {
    const a: DiagnosisAgent = { id: 'a', status: 'idle', lastPollAt: NOW - 120_000, currentTaskIds: [] };
    const b: DiagnosisAgent = { id: 'b', status: 'running', lastPollAt: NOW - 90_000, currentTaskIds: [] };
    const c: DiagnosisAgent = { id: 'c', status: 'idle', lastPollAt: null, currentTaskIds: [] };
    const r = first(input(task(), { agents: [a, b, c] }));
    expect(r.code).toBe('agents_not_polling');
    expect(r.details).toMatchObject({ agents: 3, lastPollAt: NOW - 90_000, sinceLastPollMs: 90_000 });
    expect(r.since).toBe(NOW - 90_000);
    const never = first(input(task(), { agents: [c] }));
    expect(never.details.lastPollAt).toBeNull();
  });

  it('a poll exactly pollStaleAfterMs ago still counts; one ms older does not', () => {
    const at = (ms: number): DiagnosisAgent => ({
      id: 'a',
      status: 'idle',
      lastPollAt: NOW - ms,
      currentTaskIds: [],
    });
    expect(codes(input(task(), { agents: [at(60_000)] }))).toEqual(['claimable_now']);
    expect(codes(input(task(), { agents: [at(60_001)] }))).toEqual(['agents_not_polling']);
  });

  it('an agent waiting in a long-poll counts as polling even with an old lastPollAt', () => {
    const a: DiagnosisAgent = {
      id: 'a',
      status: 'idle',
      lastPollAt: NOW - 600_000,
      currentTaskIds: ['tsk_9'],
      waiting: true,
    };
    expect(codes(input(task(), { agents: [a] }))).toEqual(['claimable_now']);
  });

  it('agents_busy: polling agents all hold tasks and none is waiting', () => {
    const a: DiagnosisAgent = {
      id: 'a',
      status: 'running',
      lastPollAt: NOW - 100,
      currentTaskIds: ['x', 'y'],
    };
    const b: DiagnosisAgent = { id: 'b', status: 'running', lastPollAt: NOW - 200, currentTaskIds: ['z'] };
    const r = first(input(task(), { agents: [a, b] }));
    expect(r.code).toBe('agents_busy');
    expect(r.details).toEqual({ type: 'codex', agents: 2, heldTasks: 3 });
  });

  it('queued_behind: tasks ahead, with or without other blockers', () => {
    const d = diagnose(input(task(), { queueAhead: 7 }));
    expect(d.reasons.map((r) => r.code)).toEqual(['queued_behind']);
    expect(d.reasons[0]!.details).toEqual({ ahead: 7, type: 'codex' });
    const busy: DiagnosisAgent = { id: 'a', status: 'running', lastPollAt: NOW, currentTaskIds: ['x'] };
    expect(codes(input(task(), { queueAhead: 2, agents: [busy] }))).toEqual(['agents_busy', 'queued_behind']);
  });

  it('dependency_unavailable: a required dependency down or rate limited blocks dispatch', () => {
    const deps = new Map<string, DependencyView>([
      [
        'openai',
        { state: 'rate_limited', until: NOW + 20_000, since: NOW - 5000, reportedBy: 'agent:agt_a' },
      ],
      ['db', { state: 'down', until: null, since: NOW - 1, reportedBy: 'admin' }],
      ['s3', { state: 'up', until: null, since: NOW - 1, reportedBy: 'admin' }],
    ]);
    const t = task({ requires: ['openai', 'db', 's3'] });
    const d = diagnose(input(t, { dependencies: deps }));
    expect(d.reasons.map((r) => r.code)).toEqual(['dependency_unavailable', 'dependency_unavailable']);
    expect(d.reasons[0]!.details).toEqual({
      name: 'openai',
      state: 'rate_limited',
      until: NOW + 20_000,
      reportedBy: 'agent:agt_a',
    });
    expect(d.reasons[0]!.since).toBe(NOW - 5000);
    expect(d.reasons[1]!.details.name).toBe('db');
  });

  it('a rate limit whose until has passed no longer blocks', () => {
    const deps = new Map<string, DependencyView>([
      ['openai', { state: 'rate_limited', until: NOW, since: NOW - 5000, reportedBy: null }],
    ]);
    expect(codes(input(task({ requires: ['openai'] }), { dependencies: deps }))).toEqual(['claimable_now']);
  });

  it('claimed_not_started: claim time, claim timeout and time left', () => {
    const t = task({
      status: 'claimed',
      attempt: 1,
      version: 1,
      agentId: 'agt_a',
      claimedAt: NOW - 10_000,
      leaseExpiresAt: NOW + 20_000,
    });
    const r = first(input(t));
    expect(r.code).toBe('claimed_not_started');
    expect(r.details).toEqual({
      agentId: 'agt_a',
      claimedAt: NOW - 10_000,
      claimTimeoutMs: 30_000,
      leaseExpiresAt: NOW + 20_000,
      expiresInMs: 20_000,
    });
  });

  it('running_normally: recent heartbeat and recent progress', () => {
    const d = diagnose(input(running({ progress: 0.4, phase: 'tests', progressChangedAt: NOW - 1000 })));
    expect(d.reasons.map((r) => r.code)).toEqual(['running_normally']);
    expect(d.reasons[0]!.details).toMatchObject({ agentId: 'agt_a', progress: 0.4, phase: 'tests' });
  });

  it('heartbeat_late: beyond 1.5 intervals since the last heartbeat, late by the excess over one interval', () => {
    expect(codes(input(running({ lastHeartbeatAt: NOW - 7500 })))).toEqual(['running_normally']);
    const r = first(input(running({ lastHeartbeatAt: NOW - 7501, leaseExpiresAt: NOW + 7499 })));
    expect(r.code).toBe('heartbeat_late');
    expect(r.details).toMatchObject({
      lateByMs: 2501,
      leaseExpiresAt: NOW + 7499,
      expiresInMs: 7499,
      heartbeatIntervalMs: 5000,
    });
  });

  it('progress_stalled: progress unchanged for stallTimeoutMs (falls back to startedAt)', () => {
    const t = running({ startedAt: NOW - 400_000, claimedAt: NOW - 400_000, progress: 0.2 });
    expect(codes(input({ ...t, progressChangedAt: NOW - 299_999 }))).toEqual(['running_normally']);
    const r = first(input({ ...t, progressChangedAt: NOW - 300_000 }));
    expect(r.code).toBe('progress_stalled');
    expect(r.details).toMatchObject({ unchangedForMs: 300_000, stallTimeoutMs: 300_000, progress: 0.2 });
    expect(first(input(t)).details.unchangedForMs).toBe(400_000);
  });

  it('heartbeat_late and progress_stalled together', () => {
    const t = running({ startedAt: NOW - 400_000, lastHeartbeatAt: NOW - 10_000 });
    expect(codes(input(t))).toEqual(['heartbeat_late', 'progress_stalled']);
    expect(diagnose(input(t)).summary).toContain('(1 more reason below)');
  });

  it('awaiting_write_back: executionDone, grace end and whether a result was uploaded', () => {
    const ref = { key: 'tsk_1/1', sizeBytes: 3, contentType: 'text/plain', sha256: 'x' };
    const t = running({
      executionDone: true,
      leaseExpiresAt: NOW + 25_000,
      resultRef: ref,
      lastHeartbeatAt: NOW - 60_000,
    });
    const r = first(input(t));
    expect(r.code).toBe('awaiting_write_back');
    expect(r.details).toEqual({
      agentId: 'agt_a',
      graceUntil: NOW + 25_000,
      inMs: 25_000,
      writeBackGraceMs: 30_000,
      hasUploadedResult: true,
    });
    expect(r.message).toContain('completes it from the uploaded result');
    expect(first(input(running({ executionDone: true, leaseExpiresAt: NOW + 1 }))).message).toContain(
      'times it out',
    );
  });

  it('every reason has a message, and the summary is one sentence naming the task', () => {
    const d = diagnose(input(task(), { agents: [] }));
    for (const r of d.reasons) expect(r.message.length).toBeGreaterThan(10);
    expect(d.summary).toMatch(/^Task tsk_1 is created: .*\.$/);
  });

  it('covers every protocol reason code', () => {
    const seen = new Set<DiagnosisCode>();
    const busy: DiagnosisAgent = { id: 'a', status: 'running', lastPollAt: NOW, currentTaskIds: ['x'] };
    const stale: DiagnosisAgent = { id: 'a', status: 'idle', lastPollAt: NOW - 999_999, currentTaskIds: [] };
    const deps = new Map<string, DependencyView>([
      ['d', { state: 'down', until: null, since: NOW, reportedBy: null }],
    ]);
    const cases: DiagnosisInput[] = [
      input(task()),
      input(task(), { agents: [] }),
      input(task(), { agents: [stale] }),
      input(task(), { agents: [busy], queueAhead: 1 }),
      input(task({ runAt: NOW + 1 })),
      input(task({ status: 'failed', attempt: 1, nextAttemptAt: NOW + 1 })),
      input(task({ requires: ['d'] }), { dependencies: deps }),
      input(task({ status: 'claimed', agentId: 'a', claimedAt: NOW, leaseExpiresAt: NOW + 1 })),
      input(running({ lastHeartbeatAt: NOW - 60_000, startedAt: NOW - 999_999 })),
      input(running({ executionDone: true })),
      input(running()),
      input(task({ status: 'timeout', attempt: 4, final: true })),
      input(
        task({
          status: 'failed',
          attempt: 1,
          final: true,
          error: { code: 'x', message: 'y', retryable: false },
        }),
      ),
      input(task({ status: 'cancelled', final: true })),
      input(task({ status: 'completed', final: true })),
    ];
    for (const c of cases) for (const r of diagnose(c).reasons) seen.add(r.code);
    expect([...seen].sort()).toEqual([...DIAGNOSIS_CODES].sort());
  });
});

describe('isDependencyUnavailable', () => {
  it('down or rate limited until `until`; up never', () => {
    expect(isDependencyUnavailable({ state: 'up', until: null, since: 0, reportedBy: null }, NOW)).toBe(
      false,
    );
    expect(isDependencyUnavailable({ state: 'down', until: null, since: 0, reportedBy: null }, NOW)).toBe(
      true,
    );
    expect(
      isDependencyUnavailable({ state: 'rate_limited', until: NOW + 1, since: 0, reportedBy: null }, NOW),
    ).toBe(true);
    expect(
      isDependencyUnavailable({ state: 'rate_limited', until: NOW, since: 0, reportedBy: null }, NOW),
    ).toBe(false);
  });
});
