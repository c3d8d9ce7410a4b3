/**
 * The local spool: reports (complete/fail) the coordinator could not be reached for, one JSON file per
 * task, written atomically (temp file + rename) so a crash never leaves half an entry. Entries are
 * delivered when the coordinator answers again — by this process, or by the next one started with the
 * same `spoolDir` — and removed once the coordinator has decided (accepted, or superseded).
 *
 * An entry keeps the agent token it was produced under: only the agent that held the task may write
 * to it. Files are created with mode 0600 in a 0700 directory for that reason.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isRetryable } from '../errors.js';
import type { Report, ReportOutcome } from './report.js';

export type SpoolEntry = Report & {
  /** Token of the agent that held the task when the report was made. */
  agentToken: string;
  spooledAt: number;
};

export interface SpoolDeliveryDeps {
  deliver(entry: SpoolEntry): Promise<ReportOutcome>;
  /** The entry left the spool: accepted, superseded (stale) or refused. */
  onDelivered(entry: SpoolEntry, outcome: ReportOutcome): void;
  onError(err: unknown, entry?: SpoolEntry): void;
}

export class Spool {
  readonly dir: string;
  private readonly entries = new Map<string, SpoolEntry>();
  private dirReady: Promise<void> | undefined;
  private delivering: Promise<void> | undefined;

  constructor(dir: string) {
    this.dir = dir;
  }

  /** Entries waiting for delivery. */
  get size(): number {
    return this.entries.size;
  }

  has(taskId: string): boolean {
    return this.entries.has(taskId);
  }

  /** Load the entries left by earlier processes. Unreadable files are reported and left alone. */
  async load(onError: (err: unknown) => void): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') onError(err);
      return;
    }
    for (const name of names) {
      if (!name.endsWith('.json') || name.startsWith('.')) continue;
      try {
        const entry = JSON.parse(await readFile(join(this.dir, name), 'utf8')) as SpoolEntry;
        if (typeof entry.taskId !== 'string' || typeof entry.version !== 'number')
          throw new Error(`${name} is not a spool entry`);
        if (!this.entries.has(entry.taskId)) this.entries.set(entry.taskId, entry);
      } catch (err) {
        onError(err);
      }
    }
  }

  /** Keep `entry` (in memory at once, on disk when this resolves). A newer entry for the task replaces an older one. */
  async write(entry: SpoolEntry): Promise<void> {
    this.entries.set(entry.taskId, entry);
    this.dirReady ??= mkdir(this.dir, { recursive: true, mode: 0o700 }).then(() => undefined);
    await this.dirReady;
    const tmp = join(this.dir, `.${fileName(entry.taskId)}.${randomBytes(6).toString('hex')}.tmp`);
    await writeFile(tmp, JSON.stringify(entry), { mode: 0o600 });
    await rename(tmp, join(this.dir, fileName(entry.taskId)));
  }

  /**
   * Forget the task's entry. With `version`, only if the entry is still that attempt's: a newer
   * attempt's report written meanwhile must survive the delivery of an older one.
   */
  async remove(taskId: string, version?: number): Promise<void> {
    const current = this.entries.get(taskId);
    if (version !== undefined && current !== undefined && current.version !== version) return;
    this.entries.delete(taskId);
    try {
      await unlink(join(this.dir, fileName(taskId)));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }

  /**
   * Try to deliver every entry, oldest first; stop at the first retryable error (the coordinator is
   * still away). One delivery round at a time: a call during a round joins it.
   */
  deliverAll(deps: SpoolDeliveryDeps): Promise<void> {
    this.delivering ??= this.round(deps).finally(() => {
      this.delivering = undefined;
    });
    return this.delivering;
  }

  private async round(deps: SpoolDeliveryDeps): Promise<void> {
    const queue = [...this.entries.values()].sort((a, b) => a.spooledAt - b.spooledAt);
    for (const entry of queue) {
      if (this.entries.get(entry.taskId) !== entry) continue;
      let outcome: ReportOutcome;
      try {
        outcome = await deps.deliver(entry);
      } catch (err) {
        deps.onError(err, entry);
        if (isRetryable(err)) return;
        continue;
      }
      try {
        await this.remove(entry.taskId, entry.version);
      } catch (err) {
        deps.onError(err, entry);
      }
      deps.onDelivered(entry, outcome);
    }
  }
}

function fileName(taskId: string): string {
  return `${taskId.replace(/[^A-Za-z0-9_-]/g, '_')}.json`;
}
