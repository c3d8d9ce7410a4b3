import type { Json } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import { InvalidOptionError, LeaseLostError, NonRetryableError } from '../errors.js';
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
    // The value as given, not as JSON would write it ("null").
    expect(() => mock.ctx.progress(Number.NaN)).toThrow(/must be a number from 0 to 1 \(got NaN\)/);
    const ref = await mock.ctx.uploadResult('hello', 'text/plain');
    expect(ref).toMatchObject({ sizeBytes: 5, contentType: 'text/plain' });
    expect(mock.uploads[0]!.body.toString()).toBe('hello');
  });

  it('keeps blobs in memory: uploadBlob returns a reference downloadBlob reads; earlier ones can be given', async () => {
    const m = createMockContext({}, { blobs: { old: Buffer.from('from attempt 1') } });
    const ref = await m.ctx.uploadBlob(Buffer.from([1, 2, 3]), 'application/x-test');
    expect(ref).toMatchObject({ bytes: 3, contentType: 'application/x-test' });
    expect(ref.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect([...(await m.ctx.downloadBlob(ref))]).toEqual([1, 2, 3]);
    expect((await m.ctx.downloadBlob({ id: 'old' })).toString()).toBe('from attempt 1');
    await expect(m.ctx.downloadBlob({ id: '' })).rejects.toBeInstanceOf(InvalidOptionError);
    m.ctx.reportDependency('openai', 'down', { message: 'x' });
    expect(m.dependencies).toEqual([{ name: 'openai', state: 'down' }]);
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

  describe('ctx.once', () => {
    it('runs fn once per key and records every call in effects', async () => {
      let runs = 0;
      const run = await runHandler(async (_task, ctx) => {
        const a = await ctx.once('email:welcome', () => {
          runs++;
          return { messageId: 'm1', at: new Date(0) as unknown as Json };
        });
        const again = await ctx.once('email:welcome', () => {
          runs++;
          return 'not sent';
        });
        const nothing = await ctx.once('audit', (() => undefined) as unknown as () => Json);
        return { a, again, nothing };
      });
      expect(run.error).toBeUndefined();
      expect(runs).toBe(1);
      // the JSON copy the coordinator would have recorded (a Date becomes a string, undefined null)
      const sent = { messageId: 'm1', at: '1970-01-01T00:00:00.000Z' };
      expect(run.result).toEqual({ a: sent, again: sent, nothing: null });
      expect(run.effects).toEqual([
        { key: 'email:welcome', result: sent, ran: true },
        { key: 'email:welcome', result: sent, ran: false },
        { key: 'audit', result: null, ran: true },
      ]);
    });

    it('options.effects are keys an earlier attempt recorded: fn does not run', async () => {
      let runs = 0;
      const run = await runHandler(
        async (_task, ctx) =>
          ctx.once('charge', () => {
            runs++;
            return 'charged again';
          }),
        { attempt: 2 },
        { effects: { charge: { id: 'ch_1' } } },
      );
      expect(run.result).toEqual({ id: 'ch_1' });
      expect(runs).toBe(0);
      expect(run.effects).toEqual([{ key: 'charge', result: { id: 'ch_1' }, ran: false }]);
    });

    it('two calls racing for a key run fn once; a throwing fn leaves the key free', async () => {
      const mock = createMockContext();
      let runs = 0;
      const pending: (() => void)[] = [];
      const slow = (): Promise<Json> => {
        runs++;
        return new Promise((resolve) => pending.push(() => resolve(`sent ${runs}`)));
      };
      const both = Promise.all([mock.ctx.once('k', slow), mock.ctx.once('k', slow)]);
      await new Promise((r) => setImmediate(r));
      for (const release of pending) release();
      expect(await both).toEqual(['sent 1', 'sent 1']);
      expect(runs).toBe(1);
      expect(mock.effects.map((e) => e.ran)).toEqual([true, false]);

      const boom = new Error('declined');
      await expect(
        mock.ctx.once('pay', () => {
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(await mock.ctx.once('pay', () => 'paid')).toBe('paid');
      expect(mock.effects.slice(2)).toEqual([{ key: 'pay', result: 'paid', ran: true }]);
    });

    it('refuses bad keys and unrecordable results, and rejects once aborted', async () => {
      const mock = createMockContext();
      await expect(mock.ctx.once('no spaces', () => 1)).rejects.toBeInstanceOf(InvalidOptionError);
      await expect(mock.ctx.once('k', () => 1, { ttlMs: 1000 })).rejects.toThrow(/options.ttlMs/);
      const big = await mock.ctx.once('big', () => 'x'.repeat(70 * 1024)).catch((e: unknown) => e);
      expect(big).toBeInstanceOf(NonRetryableError);
      expect(big).toMatchObject({
        code: 'effect_result_invalid',
        message: expect.stringMatching(/the effect ran/),
      });
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      await expect(mock.ctx.once('cyclic', () => cyclic as Json)).rejects.toMatchObject({
        code: 'effect_result_invalid',
      });
      expect(mock.effects).toEqual([]);
      const reason = new LeaseLostError(mock.task.id, 1);
      mock.abort(reason);
      let ran = false;
      await expect(
        mock.ctx.once('after', () => {
          ran = true;
          return 1;
        }),
      ).rejects.toBe(reason);
      expect(ran).toBe(false);
    });
  });
});
