/**
 * Keeps a task's session saved on the coordinator while the CLI runs: the session id at once (a
 * checkpoint whose `session` is `{flavor, sessionId, transcript: null}`), then the transcript — the
 * flavor's session files packed into one blob (session-carrier.ts), uploaded with `ctx.uploadBlob`
 * and referenced from the session — whenever the CLI completed something, at most every `syncMs`,
 * and once more when the run ends. Saves run one at a time, in order; a failed save is reported to
 * `onError` and does not stop the task (the runtime aborts the attempt if the lease is gone).
 *
 * Restoring (a retry): the carried transcript downloaded, unpacked and put back under this agent's
 * home by the flavor, before the CLI resumes the session by id.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Json } from '@rouse/protocol';
import type { TaskContext } from '@rouse/sdk';
import type { CliFlavor } from './cli-flavor.js';
import type { CarriedBlobRef, CarriedSession } from './cli-payload.js';
import { packSession, SESSION_CONTENT_TYPE, unpackSession } from './session-carrier.js';

export interface SessionKeeperDeps {
  ctx: TaskContext;
  flavor: CliFlavor;
  home: string;
  cwd: string;
  /** Upload transcripts (false: only the session id travels). */
  carryTranscript: boolean;
  syncMs: number;
  now(): number;
  /** Extra fields of the checkpoint's state. */
  state: () => Record<string, Json>;
  onError(err: unknown, op: string): void;
}

export class SessionKeeper {
  sessionId: string | null = null;
  private transcript: CarriedBlobRef | null = null;
  private lastDigest: string | null = null;
  private queue: Promise<void> = Promise.resolve();
  private syncTimer: NodeJS.Timeout | undefined;
  private lastSync = 0;
  private carry: boolean;

  constructor(private readonly deps: SessionKeeperDeps) {
    this.carry = deps.carryTranscript;
  }

  /** The CLI named its session: save it at once (a new id only). */
  sessionKnown(id: string): void {
    if (id === this.sessionId) return;
    this.sessionId = id;
    this.transcript = null;
    this.lastDigest = null;
    this.enqueue(() => this.save());
  }

  /** Something completed: upload the transcript soon (at most every `syncMs`). */
  progressed(): void {
    if (!this.carry || this.sessionId === null || this.syncTimer !== undefined) return;
    const wait = Math.max(0, this.lastSync + this.deps.syncMs - this.deps.now());
    this.syncTimer = setTimeout(() => {
      this.syncTimer = undefined;
      this.enqueue(() => this.syncTranscript());
    }, wait);
    this.syncTimer.unref();
  }

  /** A run ended: upload the transcript now, and wait for every save queued so far. */
  async flush(): Promise<void> {
    clearTimeout(this.syncTimer);
    this.syncTimer = undefined;
    if (this.carry && this.sessionId !== null) this.enqueue(() => this.syncTranscript());
    await this.queue;
  }

  dispose(): void {
    clearTimeout(this.syncTimer);
    this.syncTimer = undefined;
  }

  /**
   * Put a carried session's transcript back under the home (when it has one and this SDK can fetch
   * blobs). True when the session can be resumed here: restored, or carried without a transcript
   * (its files may be in this home already).
   */
  async restore(carried: CarriedSession): Promise<boolean> {
    const { ctx, flavor, home, cwd } = this.deps;
    if (carried.transcript === null) return true;
    try {
      const blob = await ctx.downloadBlob(carried.transcript);
      await flavor.restoreSession(home, carried.sessionId, cwd, unpackSession(blob));
      this.sessionId = carried.sessionId;
      this.transcript = carried.transcript;
      return true;
    } catch (err) {
      this.deps.onError(err, 'restore session');
      return false;
    }
  }

  private enqueue(fn: () => Promise<void>): void {
    this.queue = this.queue.then(fn).catch((err: unknown) => {
      // a coordinator without task blobs: the session id still travels, the transcript cannot
      if ((err as { code?: unknown }).code === 'unsupported') this.carry = false;
      this.deps.onError(err, 'save session');
    });
  }

  private session(): Json {
    return { flavor: this.deps.flavor.name, sessionId: this.sessionId, transcript: this.transcript as Json };
  }

  private async save(): Promise<void> {
    await this.deps.ctx.checkpoint({ ...this.deps.state(), sessionId: this.sessionId }, this.session());
  }

  private async syncTranscript(): Promise<void> {
    const { flavor, home, cwd, ctx } = this.deps;
    const id = this.sessionId;
    if (id === null) return;
    this.lastSync = this.deps.now();
    const paths = await flavor.sessionFiles(home, id, cwd);
    if (paths.length === 0) return;
    const files = await Promise.all(
      paths.map(async (path) => ({ path, content: await readFile(join(home, path)) })),
    );
    const packed = packSession(files);
    const digest = createHash('sha256').update(packed).digest('hex');
    if (digest === this.lastDigest) return;
    const ref = await ctx.uploadBlob(packed, SESSION_CONTENT_TYPE);
    if (id !== this.sessionId) return;
    this.transcript = ref;
    this.lastDigest = digest;
    await this.save();
  }
}
