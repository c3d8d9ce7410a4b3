/**
 * Test helpers for handler authors: run a handler against a mock task environment, without a
 * coordinator, and look at what it did (progress, checkpoints, logs, uploads, effects) and how it
 * ended.
 *
 * @example
import { runHandler } from '@rouse/sdk/testing';
 * const run = await runHandler(myHandler, { payload: { n: 2 } }, { instantSleep: true });
 * expect(run.error).toBeUndefined();
 * expect(run.result).toEqual({ square: 4 });
 * expect(run.progress.at(-1)).toEqual({ value: 1, phase: 'done' });
 */
import { createHash } from 'node:crypto';
import type { BlobRef, DependencyState, Json, ResultRef, Task } from '@rouse/protocol';
import { systemNow } from '../clock.js';
import { TaskCancelledError } from '../errors.js';
import { classifyError, classifyValue, type DependencyObservation } from '../runtime/classify-dependency.js';
import { effectResult } from '../worker/effects.js';
import { isTooLargeInline } from '../worker/report.js';
import type { TaskContext, TaskHandler } from '../worker/task-context.js';
import { TaskRun, type TaskRunHost } from '../worker/task-run.js';

let seq = 0;

/** A complete {@link Task} (status `running`, attempt 1, version 1, default timing) with `partial` applied. */
export function mockTask(partial: Partial<Task> = {}): Task {
  const now = systemNow();
  seq++;
  return {
    id: `tsk_mock_${seq}`,
    type: 'test',
    status: 'running',
    payload: null,
    attempt: 1,
    maxAttempts: 4,
    version: 1,
    agentId: 'agt_mock',
    priority: 0,
    resumable: false,
    requires: [],
    labels: {},
    idempotencyKey: null,
    timing: {
      heartbeatIntervalMs: 5000,
      heartbeatTimeoutMs: 15000,
      claimTimeoutMs: 30000,
      executionTimeoutMs: null,
      attemptDeadlineMs: null,
      stallTimeoutMs: 300000,
    },
    progress: null,
    phase: null,
    executionDone: false,
    checkpoint: null,
    session: null,
    result: null,
    resultRef: null,
    error: null,
    createdAt: now,
    runAt: now,
    claimedAt: now,
    startedAt: now,
    lastHeartbeatAt: null,
    progressChangedAt: now,
    leaseExpiresAt: now + 15000,
    nextAttemptAt: null,
    finishedAt: null,
    final: false,
    ...partial,
  };
}

export interface MockContextOptions {
  /** `ctx.sleep(ms)` resolves at once (still rejects when aborted). @default false */
  instantSleep?: boolean;
  /** Make `ctx.checkpoint` fail with this error (e.g. a `LeaseLostError`). */
  checkpointError?: Error;
  /**
   * Effect keys recorded by an earlier attempt, with their results: `ctx.once(key, fn)` returns the
   * result without running `fn`, as it would on a retry.
   *
   * @example
   * const retry = await runHandler(handler, { attempt: 2 }, { effects: { 'email:welcome': { id: 'm1' } } });
   */
  effects?: Record<string, Json>;
  /** Blobs stored by an earlier attempt, by id: `ctx.downloadBlob({id})` returns them. */
  blobs?: Record<string, Buffer>;
}

/** A mock task environment and everything the handler did in it. */
export interface MockContext {
  ctx: TaskContext;
  task: Task;
  /** Every `ctx.progress` call, in order. */
  progress: { value: number; phase: string | undefined }[];
  /** Every `ctx.checkpoint` call, in order. */
  checkpoints: { state: Json; session: Json | undefined }[];
  /** Every `ctx.log` line, in order. */
  logs: { stream: string; text: string }[];
  /** Every `ctx.uploadResult` call. */
  uploads: { body: Buffer; contentType: string | undefined }[];
  /**
   * Every `ctx.once` call that returned, in order: its key, the result it returned (the JSON copy the
   * coordinator would have recorded) and whether its `fn` ran (false: the key was recorded already,
   * by an earlier call or in {@link MockContextOptions.effects}). Keys are kept per mock context,
   * as a coordinator keeps them per task; a call whose `fn` threw leaves the key free and no entry.
   */
  effects: { key: string; result: Json; ran: boolean }[];
  /**
   * What every `ctx.withDependency` call revealed and every `ctx.reportDependency` said, in order (`state` undefined: the error said nothing
   * about the service). Classified as the worker does.
   */
  dependencies: { name: string; state: DependencyState | undefined; retryAfterMs?: number }[];
  /** True once the handler called `ctx.executionDone()`. */
  readonly executionDone: boolean;
  /** Abort `ctx.signal`, as a lost lease, a cancel or a shutdown would. @default reason TaskCancelledError */
  abort(reason?: Error): void;
  /** Deliver a `wake` command: sets `ctx.interrupted` and runs the `onWake` callbacks. */
  wake(reason?: string): void;
}

/** Build a mock environment for `task` (completed by {@link mockTask}). */
export function createMockContext(task: Partial<Task> = {}, options: MockContextOptions = {}): MockContext {
  const fullTask = mockTask(task);
  let executionDone = false;
  const recordedEffects = new Map<string, Json>(
    Object.entries(options.effects ?? {}).map(([key, result]) => [key, effectResult(key, result)]),
  );
  const runningEffects = new Map<string, Promise<Json>>();
  const blobs = new Map<string, Buffer>(Object.entries(options.blobs ?? {}));
  const mock = {
    task: fullTask,
    progress: [] as MockContext['progress'],
    checkpoints: [] as MockContext['checkpoints'],
    logs: [] as MockContext['logs'],
    uploads: [] as MockContext['uploads'],
    effects: [] as MockContext['effects'],
    dependencies: [] as MockContext['dependencies'],
    get executionDone() {
      return executionDone;
    },
  };
  const host: TaskRunHost = {
    async checkpoint(_run, state, session) {
      if (options.checkpointError) throw options.checkpointError;
      mock.checkpoints.push({ state, session });
    },
    log(_run, text, stream) {
      mock.logs.push({ stream, text });
    },
    async uploadResult(run, body, contentType): Promise<ResultRef> {
      const bytes = Buffer.from(body);
      mock.uploads.push({ body: bytes, contentType });
      return {
        key: `${run.task.id}/${run.version}`,
        sizeBytes: bytes.length,
        contentType: contentType ?? 'application/octet-stream',
        sha256: createHash('sha256').update(bytes).digest('hex'),
      };
    },
    async uploadBlob(_run, body, contentType): Promise<BlobRef> {
      const bytes = Buffer.from(body);
      const ref: BlobRef = {
        id: `blob-${blobs.size + 1}`,
        bytes: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        contentType: contentType ?? 'application/octet-stream',
      };
      blobs.set(ref.id, bytes);
      return ref;
    },
    async downloadBlob(_run, blobId) {
      const bytes = blobs.get(blobId);
      if (bytes === undefined) throw new Error(`no blob ${blobId} in this mock context`);
      return Buffer.from(bytes);
    },
    async once(run, key, fn) {
      for (;;) {
        if (run.signal.aborted) throw run.signal.reason;
        if (recordedEffects.has(key)) {
          const result = recordedEffects.get(key) as Json;
          mock.effects.push({ key, result, ran: false });
          return result as Awaited<ReturnType<typeof fn>>;
        }
        const running = runningEffects.get(key);
        if (running === undefined) break;
        await running.catch(() => {}); // another call runs it: wait for its result (or its failure)
      }
      const running = (async () => {
        const result = effectResult(key, await fn());
        recordedEffects.set(key, result);
        return result;
      })();
      runningEffects.set(key, running);
      try {
        const result = await running;
        mock.effects.push({ key, result, ran: true });
        return result as Awaited<ReturnType<typeof fn>>;
      } finally {
        runningEffects.delete(key);
      }
    },
    async withDependency(_run, name, fn) {
      const record = (o: DependencyObservation | undefined): void => {
        const entry: MockContext['dependencies'][number] = { name, state: o?.state };
        if (o?.retryAfterMs !== undefined) entry.retryAfterMs = o.retryAfterMs;
        mock.dependencies.push(entry);
      };
      try {
        const value = await fn();
        record(classifyValue(value, systemNow()));
        return value;
      } catch (err) {
        record(classifyError(err, systemNow()));
        throw err;
      }
    },
    reportDependency(_run, name, state, o) {
      const entry: MockContext['dependencies'][number] = { name, state };
      if (o.retryAfterMs !== undefined) entry.retryAfterMs = o.retryAfterMs;
      mock.dependencies.push(entry);
    },
    onError(_run, err) {
      throw err;
    },
    onProgress(_run, value, phase) {
      mock.progress.push({ value, phase });
    },
    onExecutionDone() {
      executionDone = true;
    },
    ...(options.instantSleep
      ? {
          sleep: (run: TaskRun) =>
            run.signal.aborted ? Promise.reject(run.signal.reason) : Promise.resolve(),
        }
      : {}),
  };
  const run = new TaskRun(fullTask, host);
  return Object.assign(mock, {
    ctx: run as TaskContext,
    abort: (reason?: Error) =>
      run.abort(reason ?? new TaskCancelledError(fullTask.id, 'aborted by the test')),
    wake: (reason?: string) => run.wake(reason),
  });
}

/** What {@link runHandler} returns: the mock environment plus how the handler ended. */
export interface HandlerRun<R> extends MockContext {
  /** The handler's return value (undefined when it threw, or returned a value JSON cannot carry). */
  result: R | undefined;
  /**
   * What the handler threw (undefined when it returned), or the `NonRetryableError` (`result_invalid`)
   * the worker fails the task with when the handler returned a value JSON cannot carry.
   */
  error: unknown;
}

export interface RunHandlerOptions extends MockContextOptions {
  /** Called right after the handler started, e.g. to `abort()` or `wake()` it mid-flight. */
  during?: (mock: MockContext) => void | Promise<void>;
}

/** Run `handler` once against a mock environment and report what it did. Never throws for the handler. */
// biome-ignore lint/suspicious/noConfusingVoidType: a handler may return nothing
export async function runHandler<R extends Json | void>(
  handler: TaskHandler<R>,
  task: Partial<Task> = {},
  options: RunHandlerOptions = {},
): Promise<HandlerRun<R>> {
  const mock = createMockContext(task, options);
  let result: R | undefined;
  let error: unknown;
  const done = (async () => {
    const r = await handler(mock.task, mock.ctx);
    // as the worker does: a result JSON cannot carry fails the task (`result_invalid`)
    if (r !== undefined) isTooLargeInline(r as Json);
    return r;
  })().then(
    (r) => {
      result = r;
    },
    (e: unknown) => {
      error = e;
    },
  );
  await options.during?.(mock);
  await done;
  return Object.assign(mock, { result, error });
}
