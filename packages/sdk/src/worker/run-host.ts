/**
 * The side effects a running handler's `ctx` has, for the worker: checkpoints and result uploads
 * (fenced by the attempt's version; a refusal that says the lease is gone or the task was cancelled
 * aborts the run), buffered logs, and dependency observations for the agent heartbeat.
 */
import type { Json, ResultRef } from '@rouse/protocol';
import type { Client } from '../client.js';
import { type DependencyTracker, runWithDependency } from '../runtime/dependencies.js';
import type { LogBuffer } from './log-buffer.js';
import type { TaskRun, TaskRunHost } from './task-run.js';
import type { Emit } from './task-runner.js';

export interface RunHostDeps {
  /** The client acting as this agent. */
  client(): Client;
  logs: LogBuffer;
  dependencies: DependencyTracker;
  emit: Emit;
  /** A write was refused (`err` is whatever the client threw). */
  refused(run: TaskRun, err: unknown): void;
}

export class RunHost implements TaskRunHost {
  private readonly deps: RunHostDeps;

  constructor(deps: RunHostDeps) {
    this.deps = deps;
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

  withDependency<T>(_run: TaskRun, name: string, fn: () => Promise<T> | T): Promise<T> {
    return runWithDependency(this.deps.dependencies, name, fn);
  }

  onError(run: TaskRun, error: unknown, op: string): void {
    this.deps.emit('error', { error, op, taskId: run.task.id });
  }
}
