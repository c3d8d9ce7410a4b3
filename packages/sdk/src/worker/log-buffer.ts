/**
 * Buffers `ctx.log` lines and sends them in batches (`POST /v1/tasks/{id}/logs`), on a timer or when a
 * task has many lines waiting, in order per task. Logs never ride on heartbeats (docs/design.md §3).
 */
import type { TaskRun } from './task-run.js';

/** Limits of one append request (the protocol's schema). */
export const MAX_LOG_LINES_PER_REQUEST = 1000;
export const MAX_LOG_LINE_CHARS = 64 * 1024;

export interface LogBufferDeps {
  send(run: TaskRun, lines: { stream: string; text: string }[]): Promise<void>;
  onError(run: TaskRun, err: unknown): void;
  flushIntervalMs: number;
}

export class LogBuffer {
  private readonly deps: LogBufferDeps;
  private readonly dirty = new Set<TaskRun>();
  private readonly chains = new Map<TaskRun, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(deps: LogBufferDeps) {
    this.deps = deps;
  }

  append(run: TaskRun, text: string, stream: string): void {
    run.logLines ??= [];
    if (text.length <= MAX_LOG_LINE_CHARS) run.logLines.push({ stream, text });
    else
      for (let i = 0; i < text.length; i += MAX_LOG_LINE_CHARS)
        run.logLines.push({ stream, text: text.slice(i, i + MAX_LOG_LINE_CHARS) });
    this.dirty.add(run);
    if (run.logLines.length >= MAX_LOG_LINES_PER_REQUEST) void this.flush(run);
    else if (this.timer === undefined) {
      this.timer = setTimeout(this.onTimer, this.deps.flushIntervalMs);
      this.timer.unref();
    }
  }

  /** Send the run's buffered lines; resolves when they (and any earlier flush of it) are sent. */
  flush(run: TaskRun): Promise<void> {
    const lines = run.logLines;
    this.dirty.delete(run);
    run.logLines = null;
    const previous = this.chains.get(run);
    if (!lines || lines.length === 0) return previous ?? Promise.resolve();
    const next = (previous ?? Promise.resolve()).then(() => this.send(run, lines));
    this.chains.set(run, next);
    void next.then(() => {
      if (this.chains.get(run) === next) this.chains.delete(run);
    });
    return next;
  }

  /** Send everything buffered. */
  async flushAll(): Promise<void> {
    await Promise.all([...this.dirty].map((run) => this.flush(run)));
    await Promise.all([...this.chains.values()]);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    for (const run of [...this.dirty]) void this.flush(run);
  };

  private async send(run: TaskRun, lines: { stream: string; text: string }[]): Promise<void> {
    for (let i = 0; i < lines.length; i += MAX_LOG_LINES_PER_REQUEST) {
      try {
        await this.deps.send(run, lines.slice(i, i + MAX_LOG_LINES_PER_REQUEST));
      } catch (err) {
        // Not retried: an append that reached the server twice would duplicate lines.
        this.deps.onError(run, err);
        return;
      }
    }
  }
}
