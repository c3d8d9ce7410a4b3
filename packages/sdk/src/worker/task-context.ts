/**
 * What a handler receives: `(task, ctx)`, shaped like Temporal's activity context.
 *
 * The runtime sends heartbeats by itself; handler code only reports progress (`ctx.progress`), saves
 * resume state (`ctx.checkpoint`), writes logs (`ctx.log`), guards side effects that must not be
 * repeated by a retry (`ctx.once`) and watches `ctx.signal`, which aborts when the work must stop
 * (lease lost, cancelled, shutdown, execution timeout).
 */
import type { BlobRef, BudgetKind, DependencyState, Json, ResultRef, Task } from '@rouse/protocol';
import type { DependencyReportOptions } from '../runtime/dependencies.js';

/**
 * A task handler: do the work, return the result (JSON, or nothing). Throw to fail the attempt
 * (retried while attempts are left); throw {@link NonRetryableError} to fail it for good.
 * Results larger than 64 KiB are uploaded as blobs by the runtime. A result JSON cannot carry (a
 * cycle, a BigInt, a bare function) fails the task for good with code `result_invalid`.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: a handler may return nothing
export type TaskHandler<R extends Json | void = Json | void> = (task: Task, ctx: TaskContext) => Promise<R>;

/** Options of {@link TaskContext.once}. */
export interface OnceOptions {
  /**
   * How long the coordinator keeps the key and its recorded result, from when it was recorded; a
   * call after that runs `fn` again. At least 60000. @default 604800000 (7 days)
   */
  ttlMs?: number;
  /**
   * How long this attempt may take to run `fn` and record its result. If it has not recorded by then
   * (its process died, say), the claim lapses and another attempt may run `fn`. At least 1000.
   * @default 600000 (10 minutes)
   */
  claimTtlMs?: number;
}

/** An attempt's spend against one budget limit ({@link TaskContext.reportBudget}). */
export interface BudgetReport {
  kind: BudgetKind;
  /** The limit, > 0, in the kind's unit (tokens, USD, turns, ms). */
  limit: number;
  /** What the attempt spent so far, ≥ 0, in the same unit. */
  used: number;
}

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
  /**
   * Save resume state (and the session) now; resolves when the coordinator stored it. A state or
   * session JSON cannot carry (a cycle, a BigInt) rejects with a {@link NonRetryableError}
   * (`checkpoint_invalid`) before anything is sent.
   */
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
   * Report what this attempt learned about dependency `name` without a call to wrap (a child process
   * said its API is rate-limited, say): carried by the next heartbeat like {@link withDependency}'s
   * observations. Throws {@link InvalidOptionError} for a bad name, state or option.
   *
   * @example
   * ctx.reportDependency('openai', 'rate_limited', { retryAfterMs: 20_000, message: '429 from the CLI' });
   */
  reportDependency(name: string, state: DependencyState, options?: DependencyReportOptions): void;
  /**
   * Report what this attempt spent against its tightest budget limit (tokens, dollars, turns, or the
   * wall-clock ms of the attempt): it rides on the agent's heartbeats in `metrics.budgets` until the
   * attempt ends (the last report stands; a report made before the handler fails rides one more
   * heartbeat before the failure is sent). A report with `used > limit` is sent at once and opens a
   * `resource_runaway` condition for the task on the agent; the handler should then stop and fail
   * for good. Throws
   * {@link InvalidOptionError} for a bad kind or figure.
   *
   * @example
   * ctx.reportBudget({ kind: 'tokens', limit: 200_000, used: 215_400 });
   * throw new NonRetryableError('budget exceeded', { code: 'resource_runaway' });
   */
  reportBudget(report: BudgetReport): void;
  /**
   * Tell the coordinator that execution finished and the write-back is pending, so a failed write-back
   * is given a grace period instead of being declared dead. The runtime does this itself once the
   * handler returns; call it earlier if the result is assembled slowly.
   */
  executionDone(): void;
  /** Upload a large result as a blob now (complete with no inline result afterwards). */
  uploadResult(body: Buffer | string, contentType?: string): Promise<ResultRef>;
  /**
   * Store bytes for this task in the coordinator's blob store (a session transcript, a work file) and
   * return the reference; keep it in a checkpoint's session so a later attempt — on any host — can
   * fetch it with {@link downloadBlob}. Fenced like every write of the attempt.
   */
  uploadBlob(body: Buffer | string, contentType?: string): Promise<BlobRef>;
  /** The bytes of a blob stored for this task (by this attempt or an earlier one). */
  downloadBlob(ref: BlobRef | { id: string }): Promise<Buffer>;
  /**
   * Run a side effect that must happen once for this task however often the task is attempted
   * (sending an email, charging a card), and return what it returned.
   *
   * `key` names the effect within the task (keys of different tasks never meet): 1 to 200 characters
   * of letters, digits and `_ . : @ -`; a bad key rejects with an {@link InvalidOptionError} before
   * anything is sent. The first call to claim the key — in this attempt or any other, in this
   * process or on another host — runs `fn` and the coordinator records its result; every later call
   * with the key receives that result and does not run `fn`. Of two calls racing for the key, one
   * runs `fn` and the other waits for its result (checking about once a second; the wait rejects
   * with `signal.reason` if the signal aborts).
   *
   * `fn`'s value must be JSON (at most 64 KiB; `undefined` becomes `null`). What `once` returns is
   * the recorded value, as JSON: the same thing later attempts receive. A value that cannot be
   * recorded (not JSON, too large) rejects with a {@link NonRetryableError} — `fn` ran, and a retry
   * would run it again.
   *
   * If `fn` throws, the claim is given back and the error rethrown: the effect counts as not done,
   * and the next call with the key (this attempt's or a later one's) runs `fn` again.
   *
   * Exactly once, except at one edge: if the process dies (or loses the coordinator) after `fn` ran
   * and before its result was recorded, the coordinator cannot know the effect happened, and once the
   * claim lapses (`claimTtlMs`, default 10 minutes) another attempt runs `fn` again — at least once
   * there. Where the service allows it, pass it an idempotency key derived from the task id and `key`
   * to close that gap too. Keys are kept `ttlMs` (default 7 days) after they are recorded.
   *
   * @example
   * const receipt = await ctx.once('charge', () =>
   *   payments.charge({ customer, amountCents: 1200, idempotencyKey: `${task.id}:charge` }),
   * );
   * await ctx.once('email:receipt', async () => {
   *   await mailer.send(customer.email, renderReceipt(receipt));
   *   return null;
   * });
   */
  once<T extends Json>(key: string, fn: () => Promise<T> | T, options?: OnceOptions): Promise<T>;
}
