/**
 * One attempt of a coding-agent task (see cli-task.ts for the whole story): runs of the CLI — a
 * first run, then a resume per wake — with the session kept, progress and dependencies reported, the
 * budget and the execution deadline enforced, and ctx.signal obeyed; and the attempt's outcome.
 */
import type { Json } from '@rouse/protocol';
import { type Logger, NonRetryableError, type TaskContext } from '@rouse/sdk';
import {
  addUsage,
  type BudgetBreach,
  type BudgetLimits,
  breachStanding,
  budgetStanding,
  EMPTY_USAGE,
  overBudget,
  type UsageTally,
} from './budget.js';
import type { CliEvent, CliFlavor, CliRunPlan } from './cli-flavor.js';
import { classifyRunEnd, type RunVerdict } from './cli-outcome.js';
import type { CarriedSession, CliPayload } from './cli-payload.js';
import { ProgressTally } from './cli-progress.js';
import { CliRun } from './cli-run.js';
import { changedFiles, snapshotFiles } from './file-snapshot.js';
import type { GroupRegistry } from './group-guard.js';
import { SessionKeeper } from './session-keeper.js';

export interface CliAttemptDeps {
  ctx: TaskContext;
  flavor: CliFlavor;
  bin: string;
  baseEnv: NodeJS.ProcessEnv;
  payload: CliPayload;
  limits: BudgetLimits;
  cwd: string;
  home: string;
  carried: CarriedSession | null;
  /** When (ms after the start) the adapter gives up the attempt; null: no limit. */
  deadlineMs: number | null;
  /** The grace of the stop at the deadline. */
  timeoutGraceMs: number;
  extraArgs: string[];
  extraEnv: Record<string, string>;
  finalGraceMs: number;
  stopGraceMs: number;
  cancelGraceMs: number;
  interruptGraceMs: number;
  toolTickMs: number;
  toolStallCapMs: number;
  maxWakeResumes: number;
  carryTranscript: boolean;
  sessionSyncMs: number;
  nudge(prompt: string, reason: string | undefined): string;
  resumePrompt(prompt: string): string;
  logger: Logger;
  /** The clock (wall-clock budget, progress ticks). */
  now(): number;
  /** Where the CLI's group is listed so that it dies with the agent. */
  guard: GroupRegistry | null;
}

/** A completed task's result. */
export interface CliTaskResult {
  message: string;
  usage: { inputTokens: number; outputTokens: number; cachedInputTokens: number };
  /** Only when the CLI reports a cost. */
  costUsd?: number;
  numTurns?: number;
  /** Paths (relative to the working directory) added, changed or removed. */
  files: string[];
  sessionId: string | null;
}

export type CliAttemptOutcome = { kind: 'complete'; result: CliTaskResult } | { kind: 'fail'; error: Error };

/** Longest log line sent; longer ones are cut. */
const MAX_LOG_LINE = 16 * 1024;

export async function runCliAttempt(d: CliAttemptDeps): Promise<CliAttemptOutcome> {
  const { ctx, flavor } = d;
  const now = () => d.now();
  const started = now();
  const note = (text: string) => ctx.log(text, 'adapter');
  let usage: UsageTally = { ...EMPTY_USAGE };
  let numTurns: number | undefined;
  let breach: BudgetBreach | null = null;
  let timedOut = false;
  let run: CliRun | null = null;
  const tally = new ProgressTally(d.toolTickMs, d.toolStallCapMs);
  const keeper = new SessionKeeper({
    ctx,
    flavor,
    home: d.home,
    cwd: d.cwd,
    carryTranscript: d.carryTranscript,
    syncMs: d.sessionSyncMs,
    now,
    state: () => ({ adapter: flavor.name, usage: usageJson(usage) }),
    onError: (err, op) => {
      d.logger.warn({ err, taskId: ctx.task.id }, `${op} failed`);
      note(`${op} failed: ${(err as Error).message}`);
    },
  });
  const report = () => {
    const { value, phase } = tally.progress(now());
    ctx.progress(value, phase);
  };
  // The spend against the tightest limit rides on the agent's heartbeats (metrics.budgets); a breach
  // is reported before the task fails, so the coordinator opens resource_runaway for the task.
  const reportBudget = () => {
    const standing =
      breach !== null
        ? breachStanding(breach)
        : budgetStanding(usage, now() - started, { ...d.limits, maxBudgetUsd: d.payload.maxBudgetUsd });
    if (standing === null) return;
    try {
      ctx.reportBudget(standing);
    } catch (err) {
      note(`budget report refused: ${(err as Error).message}`);
    }
  };
  const checkBudget = () => {
    if (breach !== null) return;
    breach = overBudget(usage, now() - started, d.limits);
    reportBudget();
    if (breach === null) return;
    note(`${breach.reason}: stopping the CLI`);
    void run?.stop(d.stopGraceMs);
  };
  const onEvent = (e: CliEvent) => {
    if (tally.apply(e, now())) {
      report();
      if (e.type !== 'tool_started') keeper.progressed();
    }
    switch (e.type) {
      case 'session':
        keeper.sessionKnown(e.sessionId);
        break;
      case 'turn_started':
        usage = { ...usage, turns: usage.turns + 1 };
        checkBudget();
        break;
      case 'usage':
        usage = addUsage(usage, e);
        checkBudget();
        break;
      case 'dependency':
        try {
          ctx.reportDependency(flavor.dependency, e.state, {
            ...(e.state !== 'up' && e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {}),
            message: e.detail,
          });
        } catch (err) {
          note(`dependency report refused: ${(err as Error).message}`);
        }
        break;
      case 'result':
        if (e.numTurns !== undefined) {
          numTurns = e.numTurns;
          usage = { ...usage, turns: Math.max(usage.turns, e.numTurns) };
        }
        if (e.costUsd !== undefined) usage = { ...usage, costUsd: Math.max(usage.costUsd ?? 0, e.costUsd) };
        checkBudget();
        break;
    }
  };

  // timers: the deadline, the wall-clock budget, the tool tick
  const timers: NodeJS.Timeout[] = [];
  if (d.deadlineMs !== null) {
    timers.push(
      setTimeout(
        () => {
          timedOut = true;
          note(`execution timeout (${ctx.task.timing.executionTimeoutMs} ms) is near: stopping the CLI`);
          void run?.stop(d.timeoutGraceMs);
        },
        Math.max(0, d.deadlineMs),
      ),
    );
  }
  if (d.limits.maxWallClockMs) timers.push(setTimeout(checkBudget, d.limits.maxWallClockMs + 1));
  const tick = setInterval(() => {
    if (tally.toolTicking(now())) report();
  }, d.toolTickMs);
  timers.push(tick);
  for (const t of timers) t.unref();
  const onAbort = () => void run?.stop(d.cancelGraceMs);
  ctx.signal.addEventListener('abort', onAbort);
  let wakeReason: string | undefined;
  let wakes = 0;
  const offWake = ctx.onWake((reason) => {
    if (run === null || !run.running) return;
    wakeReason = reason;
    wakes++;
    note(`wake${reason ? ` (${reason})` : ''}: interrupting the CLI with ${flavor.interruptSignal}`);
    run.interrupt();
  });

  const before = await snapshotFiles(d.cwd);
  const carried = d.carried;
  try {
    let resumeId: string | null = null;
    let startedAfresh = false;
    let prompt = d.payload.prompt;
    if (carried !== null && (await keeper.restore(carried))) {
      resumeId = carried.sessionId;
      prompt = d.resumePrompt(d.payload.prompt);
      keeper.sessionId = resumeId;
      note(`resuming session ${resumeId} carried from an earlier attempt`);
    }
    for (;;) {
      const newSessionId = resumeId === null ? flavor.assignSessionId() : null;
      const plan: CliRunPlan = {
        prompt,
        cwd: d.cwd,
        home: d.home,
        model: d.payload.model,
        resumeSessionId: resumeId,
        newSessionId,
        maxTurns: d.limits.maxTurns ?? null,
        maxBudgetUsd: d.payload.maxBudgetUsd,
        extraArgs: d.extraArgs,
        extraEnv: d.extraEnv,
      };
      if (ctx.signal.aborted) throw ctx.signal.reason;
      run = await CliRun.start({
        flavor,
        bin: d.bin,
        baseEnv: d.baseEnv,
        plan,
        finalGraceMs: d.finalGraceMs,
        interruptGraceMs: d.interruptGraceMs,
        stopGraceMs: d.stopGraceMs,
        guard: d.guard,
        onEvent,
        onNote: note,
        onLine: (line, stream) =>
          ctx.log(line.length > MAX_LOG_LINE ? line.slice(0, MAX_LOG_LINE) : line, stream),
      });
      if (newSessionId !== null) keeper.sessionKnown(newSessionId);
      report();
      if (ctx.signal.aborted || timedOut || breach !== null) void run.stop(d.cancelGraceMs);
      const end = await run.ended;
      tally.endRun();
      await keeper.flush();
      if (ctx.signal.aborted) throw ctx.signal.reason;
      if (breach !== null) return fail(budgetError(breach));
      if (timedOut) return fail(timeoutError(ctx));
      const verdict: RunVerdict = classifyRunEnd(end);
      if (verdict.kind === 'complete') {
        const files = changedFiles(before, await snapshotFiles(d.cwd));
        const result: CliTaskResult = {
          message: run.result?.message ?? run.lastMessage ?? '',
          usage: usageJson(usage),
          files,
          sessionId: keeper.sessionId,
        };
        if (usage.costUsd !== null) result.costUsd = usage.costUsd;
        if (numTurns !== undefined) result.numTurns = numTurns;
        return { kind: 'complete', result };
      }
      if (verdict.kind === 'resume') {
        if (keeper.sessionId === null)
          return fail(retryable('interrupted', 'interrupted before the CLI named its session'));
        if (wakes > d.maxWakeResumes) {
          return fail(
            retryable('interrupted', `woken ${wakes} times; the adapter resumes at most ${d.maxWakeResumes}`),
          );
        }
        resumeId = keeper.sessionId;
        prompt = d.nudge(d.payload.prompt, wakeReason);
        tally.resumes++;
        note(`resuming session ${resumeId} with a nudge`);
        continue;
      }
      // A session the CLI would not resume — one carried from another host it cannot find here, or one
      // a wake cut off before the CLI had stored anything of it: start afresh, once per attempt.
      if (resumeId !== null && !run.sawSession && !startedAfresh) {
        startedAfresh = true;
        note(`the CLI did not resume session ${resumeId} (${verdict.message}); starting a new session`);
        resumeId = null;
        keeper.sessionId = null;
        prompt = d.payload.prompt;
        continue;
      }
      const tail = run.stderrTail.length > 0 ? `; stderr: ${run.stderrTail.join(' | ')}` : '';
      return fail(
        verdict.retryable
          ? retryable(verdict.code, verdict.message + tail)
          : new NonRetryableError(verdict.message + tail, { code: verdict.code }),
      );
    }
  } finally {
    for (const t of timers) clearTimeout(t);
    ctx.signal.removeEventListener('abort', onAbort);
    offWake();
    keeper.dispose();
    if (run?.running) await run.stop(d.cancelGraceMs);
  }
}

function fail(error: Error): CliAttemptOutcome {
  return { kind: 'fail', error };
}

function usageJson(u: UsageTally): CliTaskResult['usage'] & Record<string, Json> {
  return { inputTokens: u.inputTokens, outputTokens: u.outputTokens, cachedInputTokens: u.cachedInputTokens };
}

/** A retryable failure with a stable code (the runtime reports `code`, `message`, retryable). */
function retryable(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

function timeoutError(ctx: TaskContext): Error {
  return retryable(
    'execution_timeout',
    `the CLI was stopped before the execution timeout of ${ctx.task.timing.executionTimeoutMs} ms`,
  );
}

/** A spent budget: a `resource_runaway`, never retried. */
function budgetError(b: BudgetBreach): Error {
  return new NonRetryableError(b.reason, {
    code: 'resource_runaway',
    details: { limit: b.limit, max: b.max, used: b.used },
  });
}
