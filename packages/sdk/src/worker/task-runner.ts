/**
 * Runs claimed tasks and reports how they ended. It holds one {@link TaskRun} per attempt, from the
 * claim until the coordinator has accepted (or refused) the report, and decides where each report
 * goes: folded into the next claim, sent directly, or into the spool when the coordinator is away.
 *
 * Fencing rules enforced here (DESIGN.md §3): a run whose lease is lost or which was cancelled is
 * aborted and never reported; a report refused as stale is dropped (`leaseLost`), never retried.
 */

import type { AgentHeartbeatResponse, Json, ResultRef, Task, TaskBeat, WriteOutcome } from '@rouse/protocol';
import type { Client } from '../client.js';
import { systemNow } from '../clock.js';
import {
  ExecutionTimeoutError,
  LeaseLostError,
  RouseApiError,
  TaskCancelledError,
  WorkerShutdownError,
} from '../errors.js';
import type { Carried } from './claim-loop.js';
import type { WorkerEvents } from './events.js';
import type { LogBuffer } from './log-buffer.js';
import { deliverReport, isTooLargeInline, type Report, type ReportOutcome, toTaskError } from './report.js';
import type { Spool, SpoolEntry } from './spool.js';
import type { TaskHandler } from './task-context.js';
import { TaskRun, type TaskRunHost } from './task-run.js';

export type Emit = <K extends keyof WorkerEvents>(event: K, ...args: WorkerEvents[K]) => void;

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
}

const LEASE_GONE = new Set(['stale_version', 'not_found', 'forbidden', 'invalid_transition']);

export class TaskRunner implements TaskRunHost {
  /** Attempts held: running, reporting or spooled. */
  readonly held = new Map<string, TaskRun>();
  /** Handlers that have not settled. */
  busy = 0;
  /** Set when the worker stops: no more carrying, new tasks are handed back. */
  stopping = false;

  private readonly deps: TaskRunnerDeps;
  private readonly inFlight = new Set<Promise<void>>();
  private idleWaiters: (() => void)[] = [];

  constructor(deps: TaskRunnerDeps) {
    this.deps = deps;
  }

  /** Start handlers for freshly claimed (and started) tasks. */
  accept(tasks: Task[]): void {
    for (const task of tasks) {
      const run = new TaskRun(task, this);
      this.held.set(task.id, run);
      if (this.stopping) {
        run.settled = true;
        this.report(run, shutdownReport(run));
        continue;
      }
      const handler = this.deps.handlers.get(task.type);
      this.deps.emit('claimed', { task });
      if (handler === undefined) {
        run.settled = true;
        const error = {
          code: 'no_handler',
          message: `this worker has no handler for type ${task.type}`,
          retryable: true,
        };
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

  /** The task beats of the next agent heartbeat. */
  beats(): TaskBeat[] {
    const out: TaskBeat[] = [];
    for (const run of this.held.values()) {
      const beat: TaskBeat = { taskId: run.task.id, version: run.version };
      if (run.progressValue !== undefined) beat.progress = run.progressValue;
      if (run.phase !== undefined) beat.phase = run.phase;
      if (run.done || run.state !== 'running') beat.executionDone = true;
      out.push(beat);
    }
    return out;
  }

  /** The shortest heartbeat interval among held tasks (Infinity when none). */
  minTaskIntervalMs(): number {
    let min = Number.POSITIVE_INFINITY;
    for (const run of this.held.values()) min = Math.min(min, run.task.timing.heartbeatIntervalMs);
    return min;
  }

  /** Act on the per-task outcomes and commands of a heartbeat answer. */
  applyHeartbeat(res: AgentHeartbeatResponse, sent: TaskBeat[]): void {
    const failed = (res.tasks ?? []).filter((o) => !o.ok);
    if (failed.length > 0) {
      const sentVersions = new Map(sent.map((b) => [b.taskId, b.version]));
      for (const o of failed) {
        const run = this.held.get(o.taskId);
        if (!run || sentVersions.get(o.taskId) !== run.version) continue;
        if (run.state === 'running') this.loseLease(run, o.code ?? 'stale_version');
        else if (run.state === 'spooled') void this.dropSpooled(run, o.code ?? 'stale_version');
        // 'reporting': the report in flight decides
      }
    }
    for (const command of res.commands ?? []) {
      if (command.type === 'cancel' && command.taskId) this.cancel(command.taskId, command.reason);
      else if (command.type === 'wake') this.wake(command.taskId, command.reason);
    }
  }

  cancel(taskId: string, reason: string | undefined): void {
    const run = this.held.get(taskId);
    if (run?.state !== 'running') return;
    this.forget(run);
    run.abort(new TaskCancelledError(taskId, reason));
    this.deps.emit('cancelled', { task: run.task, reason });
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
      if (o === undefined) this.track(this.sendDirect(run, report));
      else this.finish(run, report, o.ok ? { ok: true } : { ok: false, code: o.code ?? 'stale_version' });
    }
  }

  /** Shutdown: abort every running handler and fail its task as retryable `shutdown` (it is requeued). */
  abortRunning(): void {
    for (const run of this.held.values()) {
      if (run.state !== 'running') continue;
      run.abort(new WorkerShutdownError());
      this.report(run, shutdownReport(run));
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
      onError: (error, entry) => this.deps.emit('error', { error, op: 'spool', ...taskIdOf(entry) }),
    });
  }

  // ---- TaskRunHost ---------------------------------------------------------------------------

  async checkpoint(run: TaskRun, state: Json, session: Json | undefined): Promise<void> {
    const req =
      session === undefined ? { version: run.version, state } : { version: run.version, state, session };
    try {
      await this.deps.client().checkpoint(run.task.id, req);
    } catch (err) {
      this.onWriteError(run, err);
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
      this.onWriteError(run, err);
      throw err;
    }
  }

  onError(run: TaskRun, error: unknown, op: string): void {
    this.deps.emit('error', { error, op, taskId: run.task.id });
  }

  // ---- internals ---------------------------------------------------------------------------------

  // biome-ignore lint/suspicious/noConfusingVoidType: a handler may return nothing
  private settle(run: TaskRun, value: Json | void, error: unknown, threw: boolean): void {
    run.settled = true;
    this.busy--;
    clearTimeout(run.timeoutTimer);
    if (run.state === 'running') {
      if (threw)
        this.report(run, {
          kind: 'fail',
          taskId: run.task.id,
          version: run.version,
          error: toTaskError(error),
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
    if (run.logLines !== null) this.track(this.deps.logs.flush(run).then(() => this.route(run, report)));
    else this.route(run, report);
  }

  private route(run: TaskRun, report: Report): void {
    if (run.state !== 'reporting') return;
    if (
      report.kind === 'complete' &&
      !this.stopping &&
      (report.result === undefined || !isTooLargeInline(report.result))
    ) {
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

  private async dropSpooled(run: TaskRun, code: string): Promise<void> {
    this.forget(run);
    try {
      await this.deps.spool.remove(run.task.id, run.version);
    } catch (error) {
      this.deps.emit('error', { error, op: 'spool', taskId: run.task.id });
    }
    this.deps.emit('spoolDelivered', { taskId: run.task.id, outcome: 'superseded', code });
    run.abort(new LeaseLostError(run.task.id, run.version, code));
    this.deps.emit('leaseLost', { task: run.task, code });
  }

  /** Writes by a holder (checkpoint, upload) that find the lease gone abort the run. */
  private onWriteError(run: TaskRun, err: unknown): void {
    if (err instanceof RouseApiError && LEASE_GONE.has(err.code) && run.state === 'running') {
      this.loseLease(run, err.code);
    }
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

function shutdownReport(run: TaskRun): Report {
  const error = { code: 'shutdown', message: new WorkerShutdownError().message, retryable: true };
  return { kind: 'fail', taskId: run.task.id, version: run.version, error };
}

function spoolOutcome(outcome: ReportOutcome): {
  outcome: 'delivered' | 'superseded' | 'rejected';
  code?: string;
} {
  if (outcome.ok) return { outcome: 'delivered' };
  return { outcome: outcome.code === 'stale_version' ? 'superseded' : 'rejected', code: outcome.code };
}

function taskIdOf(entry: SpoolEntry | undefined): { taskId?: string } {
  return entry ? { taskId: entry.taskId } : {};
}
