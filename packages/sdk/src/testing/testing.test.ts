import { describe, expect, it } from 'vitest';
import { LeaseLostError, NonRetryableError } from '../errors.js';
import type { TaskHandler } from '../worker/task-context.js';
import { createMockContext, mockTask, runHandler } from './index.js';

const squarer: TaskHandler = async (task, ctx) => {
  const { n } = task.payload as { n: number };
  if (typeof n !== 'number')
    throw new NonRetryableError('payload.n must be a number', { code: 'bad_payload' });
  ctx.log(`squaring ${n}`);
  ctx.progress(0.5, 'thinking');
  await ctx.sleep(10_000);
  await ctx.checkpoint({ n }, { thread: 't1' });
  ctx.executionDone();
  ctx.progress(1, 'done');
  return { square: n * n };
};

describe('testing helpers', () => {
  it('mockTask fills a complete running task and applies the partial', () => {
    const t = mockTask({ type: 'codex', payload: { a: 1 }, attempt: 3 });
    expect(t).toMatchObject({
      type: 'codex',
      payload: { a: 1 },
      attempt: 3,
      status: 'running',
      version: 1,
      final: false,
    });
    expect(t.timing.heartbeatIntervalMs).toBe(5000);
    expect(mockTask().id).not.toBe(mockTask().id);
  });

  it('runHandler records progress, logs, checkpoints and the result', async () => {
    const run = await runHandler(squarer, { payload: { n: 7 } }, { instantSleep: true });
    expect(run.error).toBeUndefined();
    expect(run.result).toEqual({ square: 49 });
    expect(run.progress).toEqual([
      { value: 0.5, phase: 'thinking' },
      { value: 1, phase: 'done' },
    ]);
    expect(run.logs).toEqual([{ stream: 'stdout', text: 'squaring 7' }]);
    expect(run.checkpoints).toEqual([{ state: { n: 7 }, session: { thread: 't1' } }]);
    expect(run.executionDone).toBe(true);
  });

  it('captures thrown errors, and abort() rejects ctx.sleep with the reason', async () => {
    const bad = await runHandler(squarer, { payload: {} });
    expect(bad.result).toBeUndefined();
    expect(bad.error).toBeInstanceOf(NonRetryableError);

    const reason = new LeaseLostError('tsk_x', 1);
    const aborted = await runHandler(squarer, { payload: { n: 2 } }, { during: (m) => m.abort(reason) });
    expect(aborted.error).toBe(reason);
    expect(aborted.ctx.signal.aborted).toBe(true);
    expect(aborted.checkpoints).toEqual([]);
  });

  it('wake() sets interrupted and runs onWake; previous checkpoint and session are visible', async () => {
    const mock = createMockContext({ checkpoint: { step: 3 }, session: { thread: 'abc' } });
    const reasons: (string | undefined)[] = [];
    mock.ctx.onWake((r) => reasons.push(r));
    expect(mock.ctx.interrupted).toBe(false);
    mock.wake('stalled');
    expect(mock.ctx.interrupted).toBe(true);
    expect(reasons).toEqual(['stalled']);
    expect(mock.ctx.checkpointState).toEqual({ step: 3 });
    expect(mock.ctx.session).toEqual({ thread: 'abc' });
    expect(() => mock.ctx.progress(1.5)).toThrow(/ctx.progress\(value\) must be a number from 0 to 1/);
    const ref = await mock.ctx.uploadResult('hello', 'text/plain');
    expect(ref).toMatchObject({ sizeBytes: 5, contentType: 'text/plain' });
    expect(mock.uploads[0]!.body.toString()).toBe('hello');
  });

  it('records what ctx.withDependency calls revealed, and safePoint() consumes a wake', async () => {
    const run = await runHandler(
      async (_task, ctx) => {
        await ctx.withDependency('search', async () => 'hit');
        const limited = Object.assign(new Error('slow down'), {
          status: 429,
          headers: { 'retry-after': '7' },
        });
        await ctx.withDependency('openai', () => Promise.reject(limited)).catch(() => {});
        const first = await ctx.safePoint();
        return { first, second: await ctx.safePoint() };
      },
      {},
      { during: (m) => m.wake('replan') },
    );
    expect(run.error).toBeUndefined();
    expect(run.dependencies).toEqual([
      { name: 'search', state: 'up' },
      { name: 'openai', state: 'rate_limited', retryAfterMs: 7000 },
    ]);
    expect(run.result).toEqual({ first: true, second: false });
  });
});
