/**
 * The side effects a running handler's `ctx` has, for the worker: checkpoints and result uploads
 * (fenced by the attempt's version; a refusal that says the lease is gone or the task was cancelled
 * aborts the run), effect keys (`ctx.once`), buffered logs, and dependency observations for the
 * agent heartbeat.
 */
import type { BlobRef, ClaimEffectRequest, DependencyState, Json, ResultRef } from '@rouse/protocol';
import type { Client } from '../client.js';
import { type Now, systemNow } from '../clock.js';
import { RouseApiError, RouseSdkError } from '../errors.js';
import { sleepMs } from '../retry.js';
import {
  type DependencyReportOptions,
  type DependencyTracker,
  runWithDependency,
} from '../runtime/dependencies.js';
import { effectResult } from './effects.js';
import type { Emit } from './events.js';
import type { LogBuffer } from './log-buffer.js';
import type { OnceOptions } from './task-context.js';
import type { TaskRun, TaskRunHost } from './task-run.js';

/** How long `ctx.once` waits before asking again about a key another claim holds: bounds. */
export const EFFECT_POLL_MAX_MS = 1000;
export const EFFECT_POLL_MIN_MS = 50;
/** Records refused with `conflict` in one `ctx.once` call before it gives up (each needs a lapsed claim). */
const MAX_RECORD_CONFLICTS = 5;

export interface RunHostDeps {
  /** The client acting as this agent. */
  client(): Client;
  logs: LogBuffer;
  dependencies: DependencyTracker;
  emit: Emit;
  /** A write was refused (`err` is whatever the client threw). */
  refused(run: TaskRun, err: unknown): void;
  /** The clock, for how long another claim of an effect key has left. @default systemNow */
  now?: Now;
  /** A handler reached a safe point. */
  safePoint?(): Promise<void>;
  /** Send a heartbeat now (a budget report past its limit: the watchdog should see it at once). */
  beatSoon?(): Promise<void>;
}

export class RunHost implements TaskRunHost {
  private readonly deps: RunHostDeps;

  constructor(deps: RunHostDeps) {
    this.deps = deps;
  }

  async safePoint(): Promise<void> {
    await this.deps.safePoint?.();
  }

  async checkpoint(run: TaskRun, state: Json, session: Json | undefined): Promise<void> {
    const req =
      session === undefined ? { version: run.version, state } : { version: run.version, state, session };
    try {
      await this.deps.client().checkpoint(run.task.id, req);
    } catch (err) {
      this.deps.refused(run, err);
      throw err;
    }
  }

  log(run: TaskRun, text: string, stream: string): void {
    if (run.state === 'running') this.deps.logs.append(run, text, stream);
  }

  async uploadResult(
    run: TaskRun,
    body: Buffer | string,
    contentType: string | undefined,
  ): Promise<ResultRef> {
    try {
      return await this.deps.client().uploadResult(run.task.id, run.version, body, contentType);
    } catch (err) {
      this.deps.refused(run, err);
      throw err;
    }
  }

  async uploadBlob(run: TaskRun, body: Buffer | string, contentType: string | undefined): Promise<BlobRef> {
    try {
      return await this.deps.client().uploadTaskBlob(run.task.id, run.version, body, contentType);
    } catch (err) {
      if (err instanceof RouseApiError && err.status === 404 && err.details?.kind === 'route') {
        // not the task gone (the lease is fine): a coordinator from before task blobs
        throw new RouseSdkError('ctx.uploadBlob: the coordinator does not store task blobs; upgrade it', {
          code: 'unsupported',
          cause: err,
        });
      }
      this.deps.refused(run, err);
      throw err;
    }
  }

  downloadBlob(run: TaskRun, blobId: string): Promise<Buffer> {
    return this.deps.client().getTaskBlob(run.task.id, blobId);
  }

  /**
   * Claim the key; `done` → its result; `running` → wait (at most a second, at most what the other
   * claim has left) and claim again; `claimed` → run `fn`, then record its result and return what
   * the coordinator kept. `fn` throwing gives the claim back. A record refused with `conflict` (this
   * claim lapsed and another attempt took the key) goes back to claiming with the value in hand:
   * `fn` runs at most once per call.
   */
  async once<T extends Json>(
    run: TaskRun,
    key: string,
    fn: () => Promise<T> | T,
    options: OnceOptions,
  ): Promise<T> {
    const taskId = run.task.id;
    const claimReq: ClaimEffectRequest =
      options.claimTtlMs === undefined
        ? { version: run.version }
        : { version: run.version, claimTtlMs: options.claimTtlMs };
    const now = this.deps.now ?? systemNow;
    let value: { result: Json } | undefined; // fn ran in this call; its result is not recorded yet
    let conflicts = 0;
    for (;;) {
      if (run.aborted) throw run.signal.reason;
      let claim: Awaited<ReturnType<Client['claimEffect']>>;
      try {
        claim = await this.deps.client().claimEffect(taskId, key, claimReq);
      } catch (err) {
        if (err instanceof RouseApiError && err.status === 404 && err.details?.kind === 'route') {
          // not the task gone (the lease is fine): a coordinator from before effect keys
          throw new RouseSdkError(
            'ctx.once: the coordinator does not know effect keys (no route for them); upgrade it',
            { code: 'unsupported', cause: err },
          );
        }
        this.deps.refused(run, err);
        throw err;
      }
      if (claim.outcome === 'done') return claim.result as T;
      if (claim.outcome === 'running') {
        const left = claim.claimExpiresAt - now();
        await sleepMs(Math.max(EFFECT_POLL_MIN_MS, Math.min(EFFECT_POLL_MAX_MS, left)), run.signal);
        continue;
      }
      if (claim.outcome !== 'claimed') {
        throw new RouseSdkError(`the coordinator answered an effect claim with ${JSON.stringify(claim)}`, {
          code: 'bad_response',
        });
      }
      if (value === undefined) {
        let returned: T;
        try {
          returned = await fn();
        } catch (err) {
          await this.release(run, key, claim.claimId);
          throw err;
        }
        // Not JSON or too large: the effect ran but cannot be recorded; the claim is kept (it lapses).
        value = { result: effectResult(key, returned) };
      }
      const recordReq =
        options.ttlMs === undefined
          ? { claimId: claim.claimId, result: value.result }
          : { claimId: claim.claimId, result: value.result, ttlMs: options.ttlMs };
      try {
        return (await this.deps.client().recordEffect(taskId, key, recordReq)).result as T;
      } catch (err) {
        if (err instanceof RouseApiError && err.code === 'conflict' && ++conflicts <= MAX_RECORD_CONFLICTS)
          continue;
        this.deps.refused(run, err);
        throw err;
      }
    }
  }

  /** Give a claim back after `fn` threw; a failure is reported, not thrown (fn's error matters more). */
  private async release(run: TaskRun, key: string, claimId: string): Promise<void> {
    try {
      await this.deps.client().releaseEffect(run.task.id, key, claimId);
    } catch (error) {
      this.deps.emit('error', { error, op: 'once.release', taskId: run.task.id });
    }
  }

  withDependency<T>(_run: TaskRun, name: string, fn: () => Promise<T> | T): Promise<T> {
    return runWithDependency(this.deps.dependencies, name, fn);
  }

  reportDependency(
    _run: TaskRun,
    name: string,
    state: DependencyState,
    options: DependencyReportOptions,
  ): void {
    this.deps.dependencies.observe(name, state, options);
  }

  overBudget(_run: TaskRun): void {
    void this.deps.beatSoon?.();
  }

  onError(run: TaskRun, error: unknown, op: string): void {
    this.deps.emit('error', { error, op, taskId: run.task.id });
  }
}
