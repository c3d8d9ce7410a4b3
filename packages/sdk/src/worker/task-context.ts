/**
 * What a handler receives: `(task, ctx)`, shaped like Temporal's activity context.
 *
 * The runtime sends heartbeats by itself; handler code only reports progress (`ctx.progress`), saves
 * resume state (`ctx.checkpoint`), writes logs (`ctx.log`) and watches `ctx.signal`, which aborts when
 * the work must stop (lease lost, cancelled, shutdown, execution timeout).
 */
import type { Json, ResultRef, Task } from '@rouse/protocol';

/**
 * A task handler: do the work, return the result (JSON, or nothing). Throw to fail the attempt
 * (retried while attempts are left); throw {@link NonRetryableError} to fail it for good.
 * Results larger than 64 KiB are uploaded as blobs by the runtime.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: a handler may return nothing
export type TaskHandler<R extends Json | void = Json | void> = (task: Task, ctx: TaskContext) => Promise<R>;

/** The handler's view of the attempt it runs. */
export interface TaskContext {
  /** The task as claimed (status `running`). */
  readonly task: Task;
  /** Attempt number, from 1. */
  readonly attempt: number;
  /** The fencing token of this attempt; every write carries it. */
  readonly version: number;
  /**
   * Aborts when the work must stop. The reason says why: {@link LeaseLostError} (another attempt may
   * run elsewhere; the result will be dropped), {@link TaskCancelledError}, {@link WorkerShutdownError}
   * (the task is requeued) or {@link ExecutionTimeoutError} (`timing.executionTimeoutMs` passed).
   */
  readonly signal: AbortSignal;
  /** The last checkpoint's `state` from a previous attempt (resumable tasks), or null. */
  readonly checkpointState: Json | null;
  /** The session carried from a previous attempt, or null. */
  readonly session: Json | null;
  /**
   * Set by a `wake` command (for this task, or for the whole agent): check it at safe points and change
   * course. {@link safePoint} reads and clears it.
   */
  interrupted: boolean;
  /**
   * Record progress in [0, 1] and optionally a phase (≤ 256 characters). Cheap: the value rides on the
   * next heartbeat, no request is made per call.
   */
  progress(value: number, phase?: string): void;
  /** Save resume state (and the session) now; resolves when the coordinator stored it. */
  checkpoint(state: Json, session?: Json): Promise<void>;
  /** Append a log line. Buffered and sent in batches; never part of a heartbeat. @default stream 'stdout' */
  log(text: string, stream?: string): void;
  /** Wait `ms`; rejects with `signal.reason` as soon as the signal aborts. */
  sleep(ms: number): Promise<void>;
  /** Run `fn` when a `wake` command arrives for this task or this agent. Returns a function that unsubscribes. */
  onWake(fn: (reason: string | undefined) => void): () => void;
  /**
   * A safe point: resolves true when a `wake` was pending (and clears {@link interrupted}), so the code
   * can change course here: `if (await ctx.safePoint()) plan = replan()`.
   */
  safePoint(): Promise<boolean>;
  /**
   * Run `fn` (a call to an external service) and report what it revealed about dependency `name` on the
   * next heartbeat: a 429 with Retry-After → `rate_limited`; a 5xx, a refused / reset / timed-out
   * connection → `down`; an answer → `up`. Returns fn's value or rethrows its error unchanged.
   *
   * @example
   * const reply = await ctx.withDependency('openai', () => openai.chat.completions.create(req));
   */
  withDependency<T>(name: string, fn: () => Promise<T> | T): Promise<T>;
  /**
   * Tell the coordinator that execution finished and the write-back is pending, so a failed write-back
   * is given a grace period instead of being declared dead. The runtime does this itself once the
   * handler returns; call it earlier if the result is assembled slowly.
   */
  executionDone(): void;
  /** Upload a large result as a blob now (complete with no inline result afterwards). */
  uploadResult(body: Buffer | string, contentType?: string): Promise<ResultRef>;
}
