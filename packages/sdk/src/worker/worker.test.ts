import type { ClaimRequest, Json } from '@rouse/protocol';
import { MAX_INLINE_RESULT_BYTES } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import { ExecutionTimeoutError, InvalidOptionError, NonRetryableError } from '../errors.js';
import { deferred, nextEvent, startHarness } from '../test-support/harness.js';
import { mockTask } from '../testing/index.js';
import type { TaskContext } from './task-context.js';
import { Worker } from './worker.js';

const isClaim = (r: { path: string }): boolean => r.path.endsWith('/claim');

describe('Worker', () => {
  it('registers, claims with start, runs the handler and folds the result into the next claim', async () => {
    const seen: { payload: Json; attempt: number; version: number }[] = [];
    const { fake, worker } = await startHarness({
      handler: async (task, ctx) => {
        seen.push({ payload: task.payload, attempt: ctx.attempt, version: ctx.version });
        return { doubled: (task.payload as { n: number }).n * 2 };
      },
    });
    expect(worker.agentId).toBe('agt_1');
    const register = fake.requests[0]!;
    expect(register).toMatchObject({ method: 'POST', path: '/v1/agents' });
    expect(register.headers.authorization).toBe('Bearer enroll-token');
    expect(register.body).toMatchObject({ agentType: 'test-agent', taskTypes: ['test'], pid: process.pid });

    const completed = nextEvent(worker, 'completed');
    const task = fake.addTask({ payload: { n: 21 }, attempt: 2, version: 5 });
    const [event] = await completed;
    expect(event).toMatchObject({ task: { id: task.id }, result: { doubled: 42 } });
    expect(seen).toEqual([{ payload: { n: 21 }, attempt: 2, version: 5 }]);
    expect(fake.completed.get(task.id)).toEqual({ version: 5, result: { doubled: 42 }, via: 'claim' });

    const claims = fake.requests.filter(isClaim);
    expect(claims[0]!.headers.authorization).toBe('Bearer agent-token-1');
    expect(claims[0]!.body).toMatchObject({ types: ['test'], max: 1, waitMs: 5000, start: true });
    const carrier = claims.find((c) => (c.body as ClaimRequest).complete !== undefined)!;
    expect(carrier.body).toMatchObject({ complete: [{ taskId: task.id, version: 5 }], waitMs: 0 });
  });

  it('batches completions finished in the same turn into one claim', async () => {
    const { fake, worker } = await startHarness(
      { concurrency: 4, handler: async (task) => ({ id: task.id }) },
      (f) => {
        for (let i = 0; i < 4; i++) f.addTask();
      },
    );
    const ids = fake.queue.map((t) => t.id);
    const done: string[] = [];
    worker.on('completed', ({ task }) => done.push(task.id));
    await fake.waitUntil(() => fake.completed.size === 4);
    const carriers = fake.requests.filter((r) => isClaim(r) && (r.body as ClaimRequest).complete);
    expect(carriers).toHaveLength(1);
    expect((carriers[0]!.body as ClaimRequest).complete!.map((c) => c.taskId).sort()).toEqual(
      [...ids].sort(),
    );
    expect((carriers[0]!.body as ClaimRequest).max).toBe(4);
    expect(fake.requests.some((r) => r.path.endsWith('/complete'))).toBe(false);
    while (done.length < 4) await nextEvent(worker, 'completed');
  });

  it('sends a completion at once while a long-poll is waiting', async () => {
    const release = deferred();
    const { fake, worker } = await startHarness({
      concurrency: 2,
      handler: async (task) => {
        if ((task.payload as { slow?: boolean }).slow) await release.promise;
        return 'done';
      },
    });
    const slow = fake.addTask({ payload: { slow: true } });
    // the next long-poll (1 free slot) is now waiting on the fake
    await fake.waitForRequest((r) => isClaim(r) && (r.body as ClaimRequest).max === 1);
    const completed = nextEvent(worker, 'completed');
    release.resolve();
    const [event] = await completed;
    expect(event.task.id).toBe(slow.id);
    expect(fake.completed.get(slow.id)?.via).toBe('claim');
  });

  it('fails with the error code; NonRetryableError is not retryable', async () => {
    const { fake, worker } = await startHarness({
      handler: async (task) => {
        const kind = (task.payload as { kind: string }).kind;
        if (kind === 'fatal') throw new NonRetryableError('payload is unusable', { code: 'bad_payload' });
        const err = Object.assign(new Error('rate limited'), { code: 'llm_429' });
        if (kind === 'coded') throw err;
        throw new Error('plain');
      },
    });
    const failed: { id: string; error: unknown }[] = [];
    worker.on('failed', ({ task, error }) => failed.push({ id: task.id, error }));
    const fatal = fake.addTask({ payload: { kind: 'fatal' } });
    const coded = fake.addTask({ payload: { kind: 'coded' } });
    const plain = fake.addTask({ payload: { kind: 'plain' } });
    await fake.waitUntil(() => fake.failed.size === 3);
    expect(fake.failed.get(fatal.id)!.error).toEqual({
      code: 'bad_payload',
      message: 'payload is unusable',
      retryable: false,
    });
    expect(fake.failed.get(coded.id)!.error).toEqual({
      code: 'llm_429',
      message: 'rate limited',
      retryable: true,
    });
    expect(fake.failed.get(plain.id)!.error).toEqual({
      code: 'handler_error',
      message: 'plain',
      retryable: true,
    });
    while (failed.length < 3) await nextEvent(worker, 'failed');
    expect(failed.map((f) => f.id)).toEqual([fatal.id, coded.id, plain.id]);
  });

  it('aborts and fails a task that runs past executionTimeoutMs', async () => {
    const aborted = deferred<unknown>();
    const { fake } = await startHarness({
      handler: async (_task, ctx) => {
        ctx.signal.addEventListener('abort', () => aborted.resolve(ctx.signal.reason));
        await new Promise(() => {}); // ignores the signal on purpose: the runtime must not wait
      },
    });
    const task = fake.addTask({ timing: { ...mockTask().timing, executionTimeoutMs: 30 } });
    expect(await aborted.promise).toBeInstanceOf(ExecutionTimeoutError);
    await fake.waitUntil(() => fake.failed.has(task.id));
    expect(fake.failed.get(task.id)!.error).toMatchObject({ code: 'execution_timeout', retryable: true });
  });

  it('uploads a result over 64 KiB as a blob and completes without an inline result', async () => {
    const big = 'x'.repeat(MAX_INLINE_RESULT_BYTES + 10);
    const { fake, worker } = await startHarness({ handler: async () => ({ big }) });
    const completed = nextEvent(worker, 'completed');
    const task = fake.addTask();
    await completed;
    expect(fake.uploads.get(task.id)!.contentType).toBe('application/json');
    expect(JSON.parse(fake.uploads.get(task.id)!.body.toString()).big).toHaveLength(big.length);
    expect(fake.completed.get(task.id)).toEqual({ version: 1, result: undefined, via: 'complete' });
  });

  it('sends ctx.log lines in batches and checkpoints on demand', async () => {
    const { fake, worker } = await startHarness({
      logFlushIntervalMs: 10_000,
      handler: async (_task, ctx: TaskContext) => {
        ctx.log('one');
        ctx.log('two', 'stderr');
        await ctx.checkpoint({ step: 1 }, { thread: 'abc' });
        return null;
      },
    });
    const completed = nextEvent(worker, 'completed');
    const task = fake.addTask();
    await completed;
    const cp = fake.requests.find((r) => r.path.endsWith('/checkpoint'))!;
    expect(cp.body).toEqual({ version: 1, state: { step: 1 }, session: { thread: 'abc' } });
    // logs are flushed before the completion, in one request
    expect(fake.logs).toEqual([
      {
        taskId: task.id,
        lines: [
          { stream: 'stdout', text: 'one' },
          { stream: 'stderr', text: 'two' },
        ],
      },
    ]);
    const logIdx = fake.requests.findIndex((r) => r.path.endsWith('/logs'));
    const completeIdx = fake.requests.findIndex(
      (r) => r.path.endsWith('/complete') || (r.body as ClaimRequest | undefined)?.complete !== undefined,
    );
    expect(logIdx).toBeGreaterThan(0);
    expect(logIdx).toBeLessThan(completeIdx);
    expect(fake.completed.get(task.id)?.result).toBeNull();
  });

  it('rejects bad options naming the option and the rule', () => {
    const base = {
      url: 'http://127.0.0.1:1',
      token: 't',
      agentType: 'a',
      taskTypes: ['x'],
      handler: async () => null,
    };
    expect(() => new Worker({ ...base, concurrency: 0 })).toThrow(InvalidOptionError);
    expect(() => new Worker({ ...base, concurrency: 0 })).toThrow(
      'concurrency must be an integer from 1 to 1000 (got 0)',
    );
    expect(() => new Worker({ ...base, waitMs: 90_000 })).toThrow(/^waitMs must be/);
    expect(() => new Worker({ ...base, handlers: { x: async () => null } })).toThrow(
      /exactly one of handler or handlers/,
    );
    const { handler: _h, ...noHandler } = base;
    expect(() => new Worker({ ...noHandler, handlers: { y: async () => null } })).toThrow(/handlers\.x/);
  });
});
