/**
 * The runtime's record of one attempt it holds, which is also the handler's `ctx` (one object per
 * task keeps the hot path lean). Side effects go through a narrow {@link TaskRunHost}, so the same
 * class serves the worker and the test helper.
 */
import {
  type BlobRef,
  BUDGET_KINDS,
  type BudgetKind,
  type DependencyState,
  type Json,
  type ResultRef,
  type Task,
} from '@rouse/protocol';
import { InvalidOptionError, NonRetryableError } from '../errors.js';
import { sleepMs } from '../retry.js';
import type { DependencyReportOptions } from '../runtime/dependencies.js';
import { checkOnceArgs } from './effects.js';
import type { BudgetReport, OnceOptions, TaskContext } from './task-context.js';

/** What a run needs from its surroundings. */
export interface TaskRunHost {
  checkpoint(run: TaskRun, state: Json, session: Json | undefined): Promise<void>;
  log(run: TaskRun, text: string, stream: string): void;
  uploadResult(run: TaskRun, body: Buffer | string, contentType: string | undefined): Promise<ResultRef>;
  uploadBlob(run: TaskRun, body: Buffer | string, contentType: string | undefined): Promise<BlobRef>;
  downloadBlob(run: TaskRun, blobId: string): Promise<Buffer>;
  /**
   * `ctx.once`, its arguments already checked: run `fn` unless effect `key` of the task ran already,
   * and return the recorded result.
   */
  once<T extends Json>(run: TaskRun, key: string, fn: () => Promise<T> | T, options: OnceOptions): Promise<T>;
  /** Run `fn` and record what its outcome says about dependency `name`. */
  withDependency<T>(run: TaskRun, name: string, fn: () => Promise<T> | T): Promise<T>;
  /** Record a dependency observation made by hand (`ctx.reportDependency`). */
  reportDependency(
    run: TaskRun,
    name: string,
    state: DependencyState,
    options: DependencyReportOptions,
  ): void;
  /** A budget report past its limit came (`ctx.reportBudget`): its heartbeat should go now. */
  overBudget?(run: TaskRun): void;
  /** A wake callback threw. */
  onError(run: TaskRun, err: unknown, op: string): void;
  /** The handler reached a safe point (`ctx.safePoint()`): the worker takes a requested snapshot there. */
  safePoint?(run: TaskRun): Promise<void>;
  /** Replaces the real timer of `ctx.sleep` (the test helper's instant sleep). */
  sleep?(run: TaskRun, ms: number): Promise<void>;
  /** Optional observers (the test helper records these). */
  onProgress?(run: TaskRun, value: number, phase: string | undefined): void;
  onExecutionDone?(run: TaskRun): void;
}

/**
 * Where the attempt is, as far as this worker knows:
 * - `running`: the handler is at work and nothing has been reported;
 * - `reporting`: a complete/fail is on its way;
 * - `spooled`: the report is in the local spool, waiting for the coordinator;
 * - `gone`: reported, lost, cancelled — nothing more to send.
 */
export type TaskRunState = 'running' | 'reporting' | 'spooled' | 'gone';

export const MAX_PHASE_LENGTH = 256;

/**
 * The error for an argument of `ctx.checkpoint` that JSON cannot carry (a cycle, a BigInt, a bare
 * function), or undefined when it can. Non-retryable: a retry would reach the same checkpoint.
 */
function notJson(argument: 'state' | 'session', value: unknown): NonRetryableError | undefined {
  let why: string;
  try {
    if (JSON.stringify(value) !== undefined) return undefined;
    why = value === undefined ? 'undefined is not JSON' : `a ${typeof value} is not JSON`;
  } catch (err) {
    why = err instanceof Error ? err.message : String(err);
  }
  return new NonRetryableError(
    `ctx.checkpoint(${argument}): cannot be sent as JSON (${why}); pass plain JSON: objects, arrays, ` +
      'strings, numbers, booleans or null',
    { code: 'checkpoint_invalid', details: { argument } },
  );
}

export class TaskRun implements TaskContext {
  readonly task: Task;
  readonly attempt: number;
  readonly version: number;
  readonly checkpointState: Json | null;
  readonly session: Json | null;
  interrupted = false;

  /** @internal */ state: TaskRunState = 'running';
  /** @internal True once the handler's promise settled (its concurrency slot is free). */ settled = false;
  /** @internal */ progressValue: number | undefined = undefined;
  /** @internal */ phase: string | undefined = undefined;
  /** @internal Progress or phase changed since the last heartbeat took them. */ progressDirty = false;
  /** @internal The last budget report (`ctx.reportBudget`). */ budget: BudgetReport | undefined = undefined;
  /** @internal A budget report not yet taken by a heartbeat. */ budgetDirty = false;
  /** @internal */ done = false;
  /** @internal The handler's result is over the inline limit: it goes as a blob, not on a claim. */
  resultAsBlob = false;
  /**
   * @internal Aborted because the worker stops: its task is handed back by the agent's leave, so a
   * handler that then throws reports nothing (one that still returns a result reports it).
   */
  handedBack = false;
  /** @internal Log lines not yet sent. */ logLines: { stream: string; text: string }[] | null = null;
  /** @internal */ timeoutTimer: NodeJS.Timeout | undefined = undefined;
  /** @internal A cancel arrived while the report was on its way. */
  cancelNotice: { reason: string | undefined } | undefined = undefined;

  // Created on first use of `signal`: most handlers never look at it, and an AbortController per
  // task is a measurable share of the worker's CPU at thousands of tasks per second.
  private controller: AbortController | undefined;
  private abortReason: Error | undefined;
  private readonly host: TaskRunHost;
  private wakeFns: ((reason: string | undefined) => void)[] | null = null;

  constructor(task: Task, host: TaskRunHost) {
    this.task = task;
    this.attempt = task.attempt;
    this.version = task.version;
    this.checkpointState = task.checkpoint;
    this.session = task.session;
    this.host = host;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortReason) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  /** @internal True once aborted. */
  get aborted(): boolean {
    return this.abortReason !== undefined;
  }

  progress(value: number, phase?: string): void {
    if (typeof value !== 'number' || !(value >= 0 && value <= 1)) {
      throw new InvalidOptionError('ctx.progress(value)', 'must be a number from 0 to 1', value);
    }
    if (phase !== undefined && (typeof phase !== 'string' || phase.length > MAX_PHASE_LENGTH)) {
      throw new InvalidOptionError(
        'ctx.progress(value, phase)',
        `phase must be a string of at most ${MAX_PHASE_LENGTH} characters`,
      );
    }
    this.progressValue = value;
    if (phase !== undefined) this.phase = phase;
    this.progressDirty = true;
    this.host.onProgress?.(this, value, phase);
  }

  checkpoint(state: Json, session?: Json): Promise<void> {
    const bad = notJson('state', state) ?? (session === undefined ? undefined : notJson('session', session));
    if (bad !== undefined) return Promise.reject(bad);
    return this.host.checkpoint(this, state, session);
  }

  log(text: string, stream = 'stdout'): void {
    this.host.log(this, String(text), String(stream));
  }

  sleep(ms: number): Promise<void> {
    return this.host.sleep ? this.host.sleep(this, ms) : sleepMs(ms, this.signal);
  }

  onWake(fn: (reason: string | undefined) => void): () => void {
    this.wakeFns ??= [];
    this.wakeFns.push(fn);
    return () => {
      const i = this.wakeFns?.indexOf(fn) ?? -1;
      if (i !== -1) this.wakeFns?.splice(i, 1);
    };
  }

  async safePoint(): Promise<boolean> {
    await this.host.safePoint?.(this);
    const was = this.interrupted;
    this.interrupted = false;
    return was;
  }

  withDependency<T>(name: string, fn: () => Promise<T> | T): Promise<T> {
    return this.host.withDependency(this, name, fn);
  }

  reportDependency(name: string, state: DependencyState, options?: DependencyReportOptions): void {
    this.host.reportDependency(this, name, state, options ?? {});
  }

  reportBudget(report: BudgetReport): void {
    const r = report as Partial<BudgetReport> | null;
    if (typeof r !== 'object' || r === null || !BUDGET_KINDS.includes(r.kind as BudgetKind)) {
      throw new InvalidOptionError(
        'ctx.reportBudget(report)',
        `kind must be one of ${BUDGET_KINDS.join(', ')}`,
        r?.kind,
      );
    }
    if (typeof r.limit !== 'number' || !Number.isFinite(r.limit) || r.limit <= 0) {
      throw new InvalidOptionError('ctx.reportBudget(report)', 'limit must be a number above 0', r.limit);
    }
    if (typeof r.used !== 'number' || !Number.isFinite(r.used) || r.used < 0) {
      throw new InvalidOptionError('ctx.reportBudget(report)', 'used must be a number of at least 0', r.used);
    }
    const was = this.budget;
    this.budget = { kind: r.kind as BudgetKind, limit: r.limit, used: r.used };
    this.budgetDirty = true;
    // past the limit (newly): the watchdog should hear of it now, not at the next tick
    if (r.used > r.limit && !(was !== undefined && was.used > was.limit)) this.host.overBudget?.(this);
  }

  async once<T extends Json>(key: string, fn: () => Promise<T> | T, options?: OnceOptions): Promise<T> {
    checkOnceArgs(key, fn, options);
    return this.host.once(this, key, fn, options ?? {});
  }

  executionDone(): void {
    this.done = true;
    this.host.onExecutionDone?.(this);
  }

  uploadResult(body: Buffer | string, contentType?: string): Promise<ResultRef> {
    return this.host.uploadResult(this, body, contentType);
  }

  uploadBlob(body: Buffer | string, contentType?: string): Promise<BlobRef> {
    return this.host.uploadBlob(this, body, contentType);
  }

  downloadBlob(ref: BlobRef | { id: string }): Promise<Buffer> {
    if (typeof ref?.id !== 'string' || ref.id === '') {
      return Promise.reject(
        new InvalidOptionError('ctx.downloadBlob(ref)', 'needs a reference with an id', ref),
      );
    }
    return this.host.downloadBlob(this, ref.id);
  }

  /** @internal Set the interrupt flag and run the wake callbacks (a `wake` command). */
  wake(reason: string | undefined): void {
    this.interrupted = true;
    for (const fn of this.wakeFns ?? []) {
      try {
        fn(reason);
      } catch (err) {
        this.host.onError(this, err, 'onWake');
      }
    }
  }

  /** @internal Abort `signal` with `reason` (first reason wins). */
  abort(reason: Error): void {
    if (this.abortReason) return;
    this.abortReason = reason;
    this.controller?.abort(reason);
  }
}
