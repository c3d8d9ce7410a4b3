import type { AgentHeartbeatRequest } from '@rouse/protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { deferred, startHarness, within } from '../test-support/harness.js';

/** An error shaped like an HTTP API client's (OpenAI, Anthropic): `status` and `headers`. */
class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string> = {},
  ) {
    super(`the API answered ${status}`);
  }
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('the worker as a watched agent', () => {
  it('registers with its key (ROUSE_AGENT_KEY by default), supervisor and required dependencies', async () => {
    vi.stubEnv('ROUSE_AGENT_KEY', 'host-3/reviewer-2');
    vi.stubEnv('ROUSE_SUPERVISOR_ID', 'sup-host-3');
    const { fake, worker } = await startHarness({ handler: async () => null, requires: ['openai'] });
    expect(fake.registrations[0]).toMatchObject({
      agentType: 'test-agent',
      taskTypes: ['test'],
      key: 'host-3/reviewer-2',
      supervisorId: 'sup-host-3',
      requires: ['openai'],
    });
    expect(worker.incarnation).toBe(1);
    vi.unstubAllEnvs();
    const other = await startHarness({ handler: async () => null, key: 'explicit/1' });
    expect(other.fake.registrations[0]).toMatchObject({ key: 'explicit/1' });
    expect(other.fake.registrations[0]).not.toHaveProperty('supervisorId');
    expect(other.fake.registrations[0]).not.toHaveProperty('requires');
  });

  it('carries what handlers learned about dependencies on the next heartbeat, without repeating an up', async () => {
    const handled = deferred();
    const { fake, worker } = await startHarness({
      heartbeatIntervalMs: 20,
      handler: async (_task, ctx) => {
        const limited = new ApiError(429, { 'retry-after': '30' });
        await expect(ctx.withDependency('openai', () => Promise.reject(limited))).rejects.toBe(limited);
        expect(await ctx.withDependency('search', async () => ({ hits: 3 }))).toEqual({ hits: 3 });
        handled.resolve();
        return null;
      },
    });
    worker.dependency('db', 'down', { message: 'connection pool exhausted' });
    fake.addTask();
    await handled.promise;
    const withReports = (b: AgentHeartbeatRequest): boolean =>
      (b.dependencies ?? []).some((d) => d.name === 'openai');
    await within(
      5000,
      fake.waitUntil(() => fake.agentBeats().some(withReports)),
      'a beat with the reports',
    );
    const deps = fake.agentBeats().flatMap((b) => b.dependencies ?? []);
    const openai = deps.find((d) => d.name === 'openai')!;
    expect(openai).toMatchObject({ state: 'rate_limited', message: 'the API answered 429' });
    expect(openai.retryAfterMs).toBeGreaterThan(25_000);
    expect(openai.retryAfterMs).toBeLessThanOrEqual(30_000);
    expect(deps.find((d) => d.name === 'search')).toEqual({ name: 'search', state: 'up' });
    expect(deps.find((d) => d.name === 'db')).toEqual({
      name: 'db',
      state: 'down',
      message: 'connection pool exhausted',
    });
    // search keeps working: its up is not sent again
    const before = fake.agentBeats().length;
    await worker.withDependency('search', async () => 'ok');
    await fake.waitUntil(() => fake.agentBeats().length >= before + 3);
    expect(fake.agentBeats().filter((b) => b.dependencies?.some((d) => d.name === 'search'))).toHaveLength(1);
  });

  it('carries a report made by hand in a handler (ctx.reportDependency) on the next heartbeat', async () => {
    const handled = deferred();
    const { fake } = await startHarness({
      heartbeatIntervalMs: 20,
      handler: async (_task, ctx) => {
        ctx.reportDependency('anthropic', 'rate_limited', { retryAfterMs: 20_000, message: 'api_retry 429' });
        expect(() => ctx.reportDependency('bad name!', 'down')).toThrow(/dependency name/);
        handled.resolve();
        return null;
      },
    });
    fake.addTask();
    await handled.promise;
    await within(
      5000,
      fake.waitUntil(() => fake.agentBeats().some((b) => (b.dependencies ?? []).length > 0)),
      'a beat with the report',
    );
    const report = fake.agentBeats().flatMap((b) => b.dependencies ?? [])[0]!;
    expect(report).toMatchObject({ name: 'anthropic', state: 'rate_limited', message: 'api_retry 429' });
    expect(report.retryAfterMs).toBeGreaterThan(15_000);
    expect(report.retryAfterMs).toBeLessThanOrEqual(20_000);
  });

  it('wakes every running handler on an agent-level wake; safePoint() tells it once', async () => {
    const woken: string[] = [];
    const release = deferred();
    const points = deferred<boolean[]>();
    let running = 0;
    const allRunning = deferred();
    const { fake } = await startHarness({
      concurrency: 2,
      heartbeatIntervalMs: 20,
      handler: async (task, ctx) => {
        ctx.onWake((reason) => woken.push(`${task.id}: ${reason}`));
        if (++running === 2) allRunning.resolve();
        await release.promise;
        if (task.payload === 'first')
          points.resolve([ctx.interrupted, await ctx.safePoint(), await ctx.safePoint()]);
        return null;
      },
    });
    const a = fake.addTask({ payload: 'first' });
    const b = fake.addTask({ payload: 'second' });
    await allRunning.promise;
    fake.commands.push({ type: 'wake', reason: 'progress stalled' });
    await within(
      5000,
      fake.waitUntil(() => woken.length === 2),
      'both handlers woken',
    );
    expect(woken.sort()).toEqual([`${a.id}: progress stalled`, `${b.id}: progress stalled`].sort());
    release.resolve();
    expect(await points.promise).toEqual([true, true, false]);
  });

  it('sends the last progress before the completion, so the task ends with what the handler reported', async () => {
    // the coordinator's interval (60 s): no regular heartbeat happens during this test
    const { fake } = await startHarness({
      handler: async (task, ctx) => {
        if (task.payload === 'silent') return 'no progress';
        ctx.progress(0.5, 'half');
        ctx.progress(1, 'done');
        return 'finished';
      },
    });
    const task = fake.addTask();
    await within(
      5000,
      fake.waitUntil(() => fake.completed.has(task.id)),
      'the completion',
    );
    expect(fake.taskProgress.get(task.id)).toEqual({ progress: 1, phase: 'done' });
    const beatAt = fake.requests.findIndex((r) => r.path.endsWith('/heartbeat'));
    const beat = fake.requests[beatAt]!.body as AgentHeartbeatRequest;
    expect(beat.tasks).toEqual([
      { taskId: task.id, version: 1, progress: 1, phase: 'done', executionDone: true },
    ]);
    const completedAt = fake.requests.findIndex(
      (r) =>
        r.path === `/v1/tasks/${task.id}/complete` ||
        (r.path.endsWith('/claim') && (r.body as { complete?: unknown[] }).complete !== undefined),
    );
    expect(completedAt).toBeGreaterThan(-1);
    expect(beatAt).toBeLessThan(completedAt);
    // a handler that reported no progress costs no extra heartbeat
    const beats = fake.agentBeats().length;
    const silent = fake.addTask({ payload: 'silent' });
    await within(
      5000,
      fake.waitUntil(() => fake.completed.has(silent.id)),
      'the silent completion',
    );
    expect(fake.agentBeats()).toHaveLength(beats);
  });
});
