/**
 * WAL checkpoints on a thread of their own.
 *
 * In WAL mode every commit appends the pages it changed to the WAL, and a checkpoint copies them back
 * into the database file and syncs both. Left to SQLite, the checkpoint runs inside the commit that
 * crosses `wal_autocheckpoint` pages: on the coordinator's only thread, while every request waits.
 * The checkpointer moves that work to a worker thread with its own connection (checkpoint-thread.mjs),
 * which SQLite allows: a PASSIVE checkpoint copies what is committed while new commits go on being
 * appended. The coordinator's connection keeps a far larger `wal_autocheckpoint` as a backstop, so the
 * WAL stays bounded if the thread falls behind, and the coordinator goes back to checkpointing at
 * commit if the thread stops.
 *
 * The two threads share a few words of memory: the coordinator wakes a sleeping checkpointer after a
 * commit (one atomic operation when it is awake, one wake-up when it sleeps), so an idle coordinator
 * costs nothing.
 */
import { Worker } from 'node:worker_threads';
import { reapplyV8Flags } from '../../v8-flags.js';

export interface WalCheckpointerOptions {
  /** The database file, in WAL mode. */
  path: string;
  /** WAL frames not yet copied into the file at which the thread checkpoints. */
  thresholdFrames: number;
  /** How long the thread lets commits gather after it was woken before it looks at the WAL. */
  gatherMs: number;
  /**
   * The thread stopped on its own (it could not open the file, a checkpoint failed): checkpoints are
   * the caller's again. Not called after {@link WalCheckpointer.stop}.
   */
  onFailure: (err: Error) => void;
}

/** Indices of the shared words (the thread reads them from its workerData). */
const SLOT = { idle: 0, stop: 1, checkpoints: 2, started: 3 } as const;

/** How long the constructor waits for the thread to start (it takes tens of milliseconds). */
const START_WAIT_MS = 2000;

export class WalCheckpointer {
  private readonly words = new Int32Array(new SharedArrayBuffer(4 * Int32Array.BYTES_PER_ELEMENT));
  private readonly worker: Worker;
  private readonly exited: Promise<void>;
  private stopping = false;

  constructor(options: WalCheckpointerOptions) {
    const { path, thresholdFrames, gatherMs, onFailure } = options;
    this.worker = new Worker(new URL('./checkpoint-thread.mjs', import.meta.url), {
      workerData: { path, signals: this.words.buffer, slot: SLOT, gatherMs, thresholdFrames },
    });
    // A store that is never closed must not keep the process alive for its checkpointer.
    this.worker.unref();
    let failure: Error | undefined;
    this.worker.on('error', (err) => {
      failure = err;
    });
    this.exited = new Promise((resolve) => {
      this.worker.once('exit', (code) => {
        if (!this.stopping) onFailure(failure ?? new Error(`the checkpoint thread exited with code ${code}`));
        resolve();
      });
    });
    // Creating the thread's isolate resets some of V8's process-wide flags (see v8-flags.ts): wait,
    // without allocating, until the thread runs, then set them again.
    Atomics.wait(this.words, SLOT.started, 0, START_WAIT_MS);
    reapplyV8Flags();
  }

  /** A write transaction committed: wake the thread if it sleeps. Cheap enough for every commit. */
  committed(): void {
    if (Atomics.compareExchange(this.words, SLOT.idle, 1, 0) === 1) Atomics.notify(this.words, SLOT.idle, 1);
  }

  /** Checkpoints the thread has run so far. */
  get checkpoints(): number {
    return Atomics.load(this.words, SLOT.checkpoints);
  }

  /** Stop the thread, after the checkpoint it may be running, and wait until its connection is closed. */
  async stop(): Promise<void> {
    this.stopping = true;
    // Waiting for the thread must keep the process alive, or it would end here, mid-shutdown.
    this.worker.ref();
    Atomics.store(this.words, SLOT.stop, 1);
    Atomics.notify(this.words, SLOT.idle);
    Atomics.notify(this.words, SLOT.stop);
    await this.exited;
  }
}
