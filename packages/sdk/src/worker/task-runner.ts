/**
 * Runs claimed tasks and reports how they ended. It holds one {@link TaskRun} per attempt, from the
 * claim until the coordinator has accepted (or refused) the report, and decides where each report
 * goes: folded into the next claim, sent directly, or into the spool when the coordinator is away.
 *
 * Fencing rules enforced here (docs/design.md §3): a run whose lease is lost or which was cancelled is
 * aborted and never reported; a report refused as stale is dropped (`leaseLost`), never retried.
 * A cancelled task is reported as `cancelled` however the worker learns it: a `cancel` command, a
 * heartbeat answered `cancelled`, or a report refused because the task is already `cancelled`.
 *
 * A run whose last `ctx.progress()` has not ridden a heartbeat yet when its handler ends waits for
 * one more (shared) heartbeat before its report, so the task keeps the progress it ended with.
 */

import type { AgentHeartbeatResponse, Json, Task, TaskBeat, WriteOutcome } from '@rouse/protocol';
import type { Client } from '../client.js';
import { systemNow } from '../clock.js';
import {
  ExecutionTimeoutError,
  LeaseLostError,
  RouseApiError,
  TaskCancelledError,
  WorkerShutdownError,
} from '../errors.js';
import type { DependencyTracker } from '../runtime/dependencies.js';
import type { Carried } from './claim-loop.js';
import type { Emit } from './events.js';
import type { LogBuffer } from './log-buffer.js';
import {
  deliverReport,
  isTooLargeInline,
  type Report,
  type ReportOutcome,
  refusedAsCancelled,
  spoolOutcome,
  toTaskError,
} from './report.js';
import { RunHost } from './run-host.js';
import type { Spool } from './spool.js';
import type { TaskHandler } from './task-context.js';
import { TaskRun, type TaskRunHost } from './task-run.js';

/** A completion waiting to ride a claim. */
export interface PendingCompletion extends Carried {
  readonly run: TaskRun;
}

export interface TaskRunnerDeps {
  handlers: Map<string, TaskHandler>;
  /** The client acting as this agent. */
  client(): Client;
  /** This agent's token (kept with spooled reports). */
  agentToken(): string;
  /** A client acting with another token (spooled reports of an earlier process). */
  clientFor(token: string): Client;
  /** Fold a completion into the next claim. */
  carry(item: PendingCompletion): void;
  /** Slots were freed. */
  slotsFreed(): void;
  spool: Spool;
  logs: LogBuffer;
  emit: Emit;
  /** Dependency observations of handlers (`ctx.withDependency`), carried by the agent heartbeat. */
  dependencies: DependencyTracker;
  /** An agent heartbeat now; resolves when it ended (final progress before a report). */
  beatSoon(): Promise<void>;
  /** A handler reached a safe point (`ctx.safePoint()`). */
  safePoint?(): Promise<void>;
}

/** Codes of a refused write that mean the lease is gone. */
const LEASE_GONE = new Set(['stale_version', 'not_found', 'forbidden', 'invalid_transition']);

export class TaskRunner {
  /** Attempts held: running, reporting or spooled. */
  readonly held = new Map<string, TaskRun>();
  /** Handlers that have not settled. */
  busy = 0;
  /**
   * Ended runs whose report waits for a log flush or a final heartbeat: their slots stay taken, so the
   * report can ride the claim that asks for them.
   */
  waiting = 0;
  /** Set when the worker stops: no more carrying, new tasks are handed back. */
  stopping = false;

  private readonly deps: TaskRunnerDeps;
  private readonly inFlight = new Set<Promise<void>>();
  private idleWaiters: (() => void)[] = [];

  private readonly host: TaskRunHost;

  constructor(deps: TaskRunnerDeps) {
    this.deps = deps;
    this.host = new RunHost({
      client: deps.client,
      logs: deps.logs,
      dependencies: deps.dependencies,
      emit: deps.emit,
      refused: (run, err) => this.writeRefused(run, err),
      ...(deps.safePoint ? { safePoint: deps.safePoint } : {}),
      beatSoon: () => deps.beatSoon(),
    });
  }

  /** Start handlers for freshly claimed (and started) tasks. */
  accept(tasks: Task[]): void {
    for (const task of tasks) {
      const run = new TaskRun(task, this.host);
      this.held.set(task.id, run);
      if (this.stopping) {
        // Claimed as the worker stops: never started here, handed back when the agent leaves.
        run.settled = true;
        continue;
      }
      const handler = this.deps.handlers.get(task.type);
      this.deps.emit('claimed', { task });
      if (handler === undefined) {
        run.settled = true;
        const message = `this worker has no handler for type ${task.type}`;
        const error = { code: 'no_handler', message, retryable: true };
        this.report(run, { kind: 'fail', taskId: task.id, version: task.version, error });
        continue;
      }
      this.busy++;
      const timeoutMs = task.timing.executionTimeoutMs;
      if (timeoutMs !== null && timeoutMs > 0) {
        run.timeoutTimer = setTimeout(this.onExecutionTimeout, timeoutMs, run, timeoutMs);
        run.timeoutTimer.unref();
      }
      // biome-ignore lint/suspicious/noConfusingVoidType: a handler may return nothing
      let p: Promise<Json | void>;
      try {
        p = handler(task, run);
      } catch (err) {
        p = Promise.reject(err);
      }
      p.then(
        (value) => this.settle(run, value, undefined, false),
        (err: unknown) => this.settle(run, undefined, err, true),
      );
    }
  }

  /** Act on the commands and the per-task outcomes of a heartbeat answer. */
  applyHeartbeat(res: AgentHeartbeatResponse, sent: TaskBeat[]): void {
    // Commands first: a `cancel` carries the operator's reason and comes with the beat's `cancelled`.
    for (const command of res.commands ?? []) {
      if (command.type === 'cancel' && command.taskId) this.cancel(command.taskId, command.reason);
      else if (command.type === 'wake') this.wake(command.taskId, command.reason);
    }
    const failed = (res.tasks ?? []).filter((o) => !o.ok);
    if (failed.length === 0) return;
    const sentVersions = new Map(sent.map((b) => [b.taskId, b.version]));
    for (const o of failed) {
      const run = this.held.get(o.taskId);
      if (!run || sentVersions.get(o.taskId) !== run.version) continue;
      const code = o.code ?? 'stale_version';
      if (code === 'cancelled') this.cancel(o.taskId, undefined);
      else if (run.state === 'running') this.loseLease(run, code);
      else if (run.state === 'spooled') void this.dropSpooled(run, code);
      // 'reporting': the report in flight decides
    }
  }

  /**
   * The task was cancelled. A running handler is aborted with {@link TaskCancelledError}; a spooled
   * report is dropped; a report on its way will be refused, and is then told apart from a lost lease.
   */
  cancel(taskId: string, reason: string | undefined): void {
    const run = this.held.get(taskId);
    if (run === undefined || run.state === 'gone') return;
    if (run.state === 'reporting') {
      run.cancelNotice ??= { reason };
      return;
    }
    if (run.state === 'spooled') void this.removeSpooled(run, 'cancelled');
    this.cancelled(run, reason);
  }

  wake(taskId: string | undefined, reason: string | undefined): void {
    for (const run of taskId === undefined ? this.held.values() : [this.held.get(taskId)]) {
      if (run?.state === 'running') run.wake(reason);
    }
  }

  /** Completions that could not ride a claim: send them directly. */
  sendUncarried(items: PendingCompletion[]): void {
    for (const { run, wire } of items) this.track(this.sendDirect(run, { kind: 'complete', ...wire }));
  }

  /** Outcomes of completions that rode a claim. */
  onCarried(items: PendingCompletion[], outcomes: (WriteOutcome | undefined)[]): void {
    for (let i = 0; i < items.length; i++) {
      const { run, wire } = items[i]!;
      const o = outcomes[i];
      const report: Report = { kind: 'complete', ...wire };
      // A claim's outcome has no details: `invalid_transition` may be a cancel, which the direct
      // (idempotent) complete tells us in its error's details.
      if (o === undefined || (o.code === 'invalid_transition' && run.cancelNotice === undefined))
        this.track(this.sendDirect(run, report));
      else if (o.ok) this.finish(run, report, { ok: true });
      else {
        const from = run.cancelNotice === undefined ? undefined : 'cancelled';
        this.finish(run, report, { ok: false, code: o.code ?? 'stale_version', from });
      }
    }
  }

  /**
   * Shutdown: abort every running handler with a {@link WorkerShutdownError}. Nothing is reported for
   * them: the agent's leave that follows hands its tasks back at once (`timeout`, claimable again
   * without backoff), where a failure would have waited out the task's backoff. A handler that still
   * finishes before the leave reports as usual. With `leaseLostCode` (the coordinator refused the
   * agent's token: its tasks are no longer its) each handler is aborted with a {@link LeaseLostError}
   * of that code instead.
   */
  abortRunning(leaseLostCode?: string): void {
    for (const run of this.held.values()) {
      if (run.state !== 'running') continue;
      if (leaseLostCode !== undefined) {
        this.loseLease(run, leaseLostCode);
        continue;
      }
      run.handedBack = true;
      run.abort(new WorkerShutdownError());
    }
  }

  /** Resolves when no handler is running. */
  idle(): Promise<void> {
    if (this.busy === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Resolves when every report in flight was delivered or spooled. */
  async drainReports(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /** Deliver what is in the spool (this process's entries and earlier ones). */
  deliverSpool(): Promise<void> {
    return this.deps.spool.deliverAll({
      deliver: (entry) =>
        deliverReport(
          entry.agentToken === this.deps.agentToken()
            ? this.deps.client()
            : this.deps.clientFor(entry.agentToken),
          entry,
        ),
      onDelivered: (entry, outcome) => {
        this.deps.emit('spoolDelivered', { taskId: entry.taskId, ...spoolOutcome(outcome) });
        const run = this.held.get(entry.taskId);
        if (run && run.version === entry.version && run.state === 'spooled') this.finish(run, entry, outcome);
      },
      onError: (error, entry) =>
        this.deps.emit('error', { error, op: 'spool', ...(entry ? { taskId: entry.taskId } : {}) }),
    });
  }

  // ---- internals ---------------------------------------------------------------------------------

  // biome-ignore lint/suspicious/noConfusingVoidType: a handler may return nothing
  private settle(run: TaskRun, value: Json | void, error: unknown, threw: boolean): void {
    run.settled = true;
    this.busy--;
    clearTimeout(run.timeoutTimer);
    if (run.state === 'running') {
      let failure = threw ? { error } : undefined;
      if (failure === undefined && value !== undefined) {
        try {
          run.resultAsBlob = isTooLargeInline(value);
        } catch (err) {
          // not JSON: this task fails (for good), the worker and its other tasks go on
          failure = { error: err };
        }
      }
      if (failure !== undefined && run.handedBack) {
        // Its last log lines still go out, then the leave hands the task back.
        if (run.logLines === null) this.forget(run);
        else this.track(this.deps.logs.flush(run).then(() => this.forget(run)));
      } else if (failure !== undefined)
        this.report(run, {
          kind: 'fail',
          taskId: run.task.id,
          version: run.version,
          error: toTaskError(failure.error),
        });
      else
        this.report(run, {
          kind: 'complete',
          taskId: run.task.id,
          version: run.version,
          result: value as Json | undefined,
        });
    }
    this.deps.slotsFreed();
    if (this.busy === 0 && this.idleWaiters.length > 0) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  private readonly onExecutionTimeout = (run: TaskRun, timeoutMs: number): void => {
    if (run.state !== 'running') return;
    const reason = new ExecutionTimeoutError(run.task.id, timeoutMs);
    run.abort(reason);
    this.report(run, {
      kind: 'fail',
      taskId: run.task.id,
      version: run.version,
      error: { code: 'execution_timeout', message: reason.message, retryable: true },
    });
  };

  private report(run: TaskRun, report: Report): void {
    run.state = 'reporting';
    const logs = run.logLines !== null;
    // the last progress (and budget report) rides one more heartbeat first (shared by every report of this turn)
    const progress = run.progressDirty || run.budgetDirty;
    if (!logs && !progress) {
      this.route(run, report);
      return;
    }
    const waits = [logs ? this.deps.logs.flush(run) : undefined, progress ? this.deps.beatSoon() : undefined];
    this.waiting++;
    this.track(
      Promise.all(waits).then(() => {
        this.waiting--;
        this.route(run, report);
        this.deps.slotsFreed();
      }),
    );
  }

  private route(run: TaskRun, report: Report): void {
    if (run.state !== 'reporting') return;
    if (report.kind === 'complete' && !this.stopping && !run.resultAsBlob) {
      const wire =
        report.result === undefined
          ? { taskId: report.taskId, version: report.version }
          : { taskId: report.taskId, version: report.version, result: report.result };
      this.deps.carry({ wire, run });
    } else {
      this.track(this.sendDirect(run, report));
    }
  }

  private async sendDirect(run: TaskRun, report: Report): Promise<void> {
    let outcome: ReportOutcome;
    try {
      outcome = await deliverReport(this.deps.client(), report);
    } catch (error) {
      this.deps.emit('error', { error, op: report.kind, taskId: report.taskId });
      run.state = 'spooled';
      try {
        await this.deps.spool.write({
          ...report,
          agentToken: this.deps.agentToken(),
          spooledAt: systemNow(),
        });
        this.deps.emit('spooled', { taskId: report.taskId, version: report.version, kind: report.kind });
      } catch (err) {
        // still held in memory; delivered from there
        this.deps.emit('error', { error: err, op: 'spool', taskId: report.taskId });
      }
      return;
    }
    this.finish(run, report, outcome);
  }

  private finish(run: TaskRun, report: Report, outcome: ReportOutcome): void {
    if (run.state === 'gone') return;
    if (!outcome.ok && refusedAsCancelled(outcome.code, outcome.from)) {
      this.cancelled(run, run.cancelNotice?.reason);
      return;
    }
    this.forget(run);
    if (!outcome.ok) {
      // The handler already returned, but work it started may still watch the signal: stop it too.
      run.abort(new LeaseLostError(run.task.id, run.version, outcome.code));
      this.deps.emit('leaseLost', { task: run.task, code: outcome.code });
    } else if (report.kind === 'complete')
      this.deps.emit('completed', { task: run.task, result: report.result });
    else this.deps.emit('failed', { task: run.task, error: report.error });
  }

  private loseLease(run: TaskRun, code: string): void {
    this.forget(run);
    run.abort(new LeaseLostError(run.task.id, run.version, code));
    this.deps.emit('leaseLost', { task: run.task, code });
  }

  private cancelled(run: TaskRun, reason: string | undefined): void {
    this.forget(run);
    run.abort(new TaskCancelledError(run.task.id, reason));
    this.deps.emit('cancelled', { task: run.task, reason });
  }

  private async dropSpooled(run: TaskRun, code: string): Promise<void> {
    this.forget(run);
    await this.removeSpooled(run, code);
    run.abort(new LeaseLostError(run.task.id, run.version, code));
    this.deps.emit('leaseLost', { task: run.task, code });
  }

  private async removeSpooled(run: TaskRun, code: string): Promise<void> {
    try {
      await this.deps.spool.remove(run.task.id, run.version);
    } catch (error) {
      this.deps.emit('error', { error, op: 'spool', taskId: run.task.id });
    }
    this.deps.emit('spoolDelivered', { taskId: run.task.id, outcome: 'superseded', code });
  }

  /** A holder write (checkpoint, upload) was refused: a lease gone or a cancel aborts the run. */
  writeRefused(run: TaskRun, err: unknown): void {
    if (!(err instanceof RouseApiError) || run.state !== 'running') return;
    if (refusedAsCancelled(err.code, err.details?.from)) this.cancelled(run, undefined);
    else if (LEASE_GONE.has(err.code)) this.loseLease(run, err.code);
  }

  private forget(run: TaskRun): void {
    run.state = 'gone';
    run.logLines = null;
    if (this.held.get(run.task.id) === run) this.held.delete(run.task.id);
    if (run.settled) this.deps.slotsFreed();
  }

  private track(p: Promise<void>): void {
    const safe = p.then(undefined, (error: unknown) => this.deps.emit('error', { error, op: 'report' }));
    this.inFlight.add(safe);
    void safe.then(() => this.inFlight.delete(safe));
  }
}
