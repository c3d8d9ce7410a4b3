/**
 * The generic coding-agent adapter: a TaskHandler (for the SDK Worker) that runs one task through a
 * coding-agent CLI described by a {@link CliFlavor}. A flavor is plugged in by passing it:
 *
 * ```ts
 * const handler = cliTaskHandler({ flavor: codexFlavor, dataDir: '/var/lib/rouse-agent' });
 * new Worker({ url, token, agentType: 'codex', handlers: { codex: handler } });
 * ```
 *
 * Per attempt:
 * - payload `{prompt, cwd?, model?, maxTurns?, maxBudgetUsd?, maxTokens?, maxCostUsd?,
 *   maxWallClockMs?}` (cli-payload.ts; `typeDefaults[task.type]` fills what it leaves out); a bad one
 *   fails for good (`bad_payload`);
 * - working directory: payload `cwd`, else `<dataDir>/work/<taskId>` (created); the CLI's home:
 *   `home`, else `<dataDir>/homes/<flavor>`; the CLI starts in a process group of its own with stdin
 *   from /dev/null and an environment without the agent's `ROUSE_*` variables;
 * - every output line goes to the task's log (streams `stdout` / `stderr`; the adapter's own notes
 *   on `adapter`); the flavor's events become: the session — saved at once as the task's session
 *   `{flavor, sessionId, transcript}` and its transcript carried as a blob (session-keeper.ts);
 *   progress (cli-progress.ts; a tool in flight keeps it moving up to `toolStallCapMs`); usage — the
 *   budget guard (budget.ts); dependency notices — `ctx.reportDependency(flavor.dependency, …)`;
 * - a retry whose session is carried restores the transcript into this home and resumes it by id
 *   with `resumePrompt`; a wake interrupts the turn (`flavor.interruptSignal` to the CLI) and resumes
 *   the same session with `nudge` (at most `maxWakeResumes` times);
 * - the end: complete with {@link CliTaskResult}; the result came but the process lingers →
 *   killed after `finalGraceMs`, still completed; failures classified (cli-outcome.ts); the budget
 *   passed → the group is stopped and the task fails for good with code `resource_runaway`;
 *   `timing.executionTimeoutMs` → the group is stopped `timeoutMarginMs` before it and the attempt
 *   fails (retryable, `execution_timeout`) before the coordinator's attempt deadline; a cancel, a lost
 *   lease or a shutdown (ctx.signal) → the group is killed within `cancelGraceMs`.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type Json, LADDER_REASON_PREFIX, type Task } from '@rouse/protocol';
import { type Logger, NonRetryableError, noopLogger, type TaskContext, type TaskHandler } from '@rouse/sdk';
import type { BudgetLimits } from './budget.js';
import { type CliAttemptOutcome, type CliTaskResult, runCliAttempt } from './cli-attempt.js';
import type { CliFlavor } from './cli-flavor.js';
import { type CliTypeDefaults, PayloadError, parseCliPayload, readCarriedSession } from './cli-payload.js';
import { type GroupRegistry, sharedGroupGuard } from './group-guard.js';

export interface CliTaskOptions {
  flavor: CliFlavor;
  /** The agent's data directory: `work/<taskId>` and `homes/<flavor>` live under it. */
  dataDir: string;
  /** The CLI executable. @default flavor.defaultBin (looked up on PATH) */
  bin?: string;
  /** The CLI's home. @default `<dataDir>/homes/<flavor.name>` */
  home?: string;
  /** Passed to the CLI as they are (`--cli-arg`). @default [] */
  extraArgs?: string[];
  /** Added to the CLI's environment (`--cli-env`). @default {} */
  extraEnv?: Record<string, string>;
  /** The environment the CLI starts from (its `ROUSE_*` variables are left out). @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Defaults per task type for what a payload leaves out (model, maxTurns, budget limits). */
  typeDefaults?: Record<string, CliTypeDefaults>;
  /** After the result, how long the CLI has to exit before it is killed (the task still completes). @default 5000 */
  finalGraceMs?: number;
  /** Stopping the CLI: SIGTERM to its group, this long, then SIGKILL. @default 2000 */
  stopGraceMs?: number;
  /** On a cancel, a lost lease or a shutdown: the grace before SIGKILL. @default 500 */
  cancelGraceMs?: number;
  /** After a wake's interrupt, how long the CLI has to exit before its group is stopped. @default 5000 */
  interruptGraceMs?: number;
  /** How often a tool call in flight moves the progress phase. @default 5000 */
  toolTickMs?: number;
  /** How long a single tool call in flight may keep the progress moving. @default 1800000 (30 min) */
  toolStallCapMs?: number;
  /** Wakes resumed per attempt; later wakes only interrupt, and the attempt fails. @default 3 */
  maxWakeResumes?: number;
  /**
   * How long before `timing.executionTimeoutMs` the adapter stops the CLI and fails the attempt.
   * @default 10 % of the timeout, within [500, 5000] ms
   */
  timeoutMarginMs?: number;
  /** Upload the session transcript as a blob (so a retry on another host can resume). @default true */
  carryTranscript?: boolean;
  /** Transcript uploads: at most one per this many ms while the CLI runs. @default 2000 */
  sessionSyncMs?: number;
  /** The prompt of a wake's resume. @default {@link defaultNudge} */
  nudge?: (prompt: string, reason: string | undefined) => string;
  /** The prompt of a retry's resume. @default {@link defaultResumePrompt} */
  resumePrompt?: (prompt: string) => string;
  /** @default silent */
  logger?: Logger;
  /** The clock of the budget's wall-clock limit and the progress ticks. @default the system clock */
  now?: () => number;
  /**
   * Where the CLI's process group is listed so that it dies with this process, even a SIGKILLed one
   * (group-guard.ts); null: nowhere. @default the process's shared guard
   */
  groupGuard?: GroupRegistry | null;
}

export type { CliTaskResult };

const systemNow = (): number => Date.now();

export const CLI_TASK_DEFAULTS = Object.freeze({
  finalGraceMs: 5000,
  stopGraceMs: 2000,
  cancelGraceMs: 500,
  interruptGraceMs: 5000,
  toolTickMs: 5000,
  toolStallCapMs: 30 * 60_000,
  maxWakeResumes: 3,
  sessionSyncMs: 2000,
});

/**
 * The resume prompt of a wake. A person's reason (`rouse wake --reason …`) is passed on; the recovery
 * ladder's (its condition, rung and attempt) is bookkeeping the model has no use for.
 */
export function defaultNudge(prompt: string, reason: string | undefined): string {
  const shown = reason && !reason.startsWith(LADDER_REASON_PREFIX) ? ` (${reason})` : '';
  return `You were interrupted because you seemed stuck${shown}; continue the task: ${prompt}`;
}

export function defaultResumePrompt(prompt: string): string {
  return `Your previous attempt at this task was cut off; continue where you left off. The task: ${prompt}`;
}

/** How long before the execution timeout the adapter gives up, so its failure lands first. */
export function timeoutMargin(executionTimeoutMs: number, explicit?: number): number {
  if (explicit !== undefined) return Math.min(explicit, executionTimeoutMs / 2);
  return Math.min(Math.max(0.1 * executionTimeoutMs, 500), 5000, executionTimeoutMs / 2);
}

/** The handler for every task type the agent runs with this flavor. */
export function cliTaskHandler(options: CliTaskOptions): TaskHandler {
  const o = {
    ...CLI_TASK_DEFAULTS,
    ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
  } as Required<Omit<CliTaskOptions, 'typeDefaults' | 'timeoutMarginMs' | 'now' | 'groupGuard'>> &
    Pick<CliTaskOptions, 'typeDefaults' | 'timeoutMarginMs'>;
  const baseEnv = Object.fromEntries(
    Object.entries(options.env ?? process.env).filter(([k]) => !k.startsWith('ROUSE_')),
  );
  const logger = options.logger ?? noopLogger;
  return async (task: Task, ctx: TaskContext): Promise<Json> => {
    let payload: ReturnType<typeof parseCliPayload>;
    try {
      payload = parseCliPayload(task.payload, options.typeDefaults?.[task.type]);
    } catch (err) {
      if (err instanceof PayloadError) throw new NonRetryableError(err.message, { code: 'bad_payload' });
      throw err;
    }
    const cwd = payload.cwd ?? join(options.dataDir, 'work', task.id);
    const home = options.home ?? join(options.dataDir, 'homes', options.flavor.name);
    await mkdir(cwd, { recursive: true });
    await mkdir(home, { recursive: true });
    const limits: BudgetLimits = payload.limits;
    const exec = task.timing.executionTimeoutMs;
    const margin = exec !== null && exec > 0 ? timeoutMargin(exec, options.timeoutMarginMs) : null;
    const outcome: CliAttemptOutcome = await runCliAttempt({
      ctx,
      flavor: options.flavor,
      bin: options.bin ?? options.flavor.defaultBin,
      baseEnv,
      payload,
      limits,
      cwd,
      home,
      carried: readCarriedSession(ctx.session, options.flavor.name),
      deadlineMs: exec !== null && margin !== null ? exec - margin : null,
      // the stop must be over before the SDK's own timer (at the timeout itself) fires
      timeoutGraceMs: margin === null ? o.stopGraceMs : Math.min(o.stopGraceMs, margin / 2),
      extraArgs: options.extraArgs ?? [],
      extraEnv: options.extraEnv ?? {},
      finalGraceMs: o.finalGraceMs,
      stopGraceMs: o.stopGraceMs,
      cancelGraceMs: o.cancelGraceMs,
      interruptGraceMs: o.interruptGraceMs,
      toolTickMs: o.toolTickMs,
      toolStallCapMs: o.toolStallCapMs,
      maxWakeResumes: o.maxWakeResumes,
      carryTranscript: o.carryTranscript ?? true,
      sessionSyncMs: o.sessionSyncMs,
      nudge: options.nudge ?? defaultNudge,
      resumePrompt: options.resumePrompt ?? defaultResumePrompt,
      logger,
      now: options.now ?? systemNow,
      guard: options.groupGuard === undefined ? sharedGroupGuard() : options.groupGuard,
    });
    if (outcome.kind === 'complete') return outcome.result as unknown as Json;
    throw outcome.error;
  };
}
