/**
 * Exact lease deadlines (docs/design.md §3): a min-heap keyed by `leaseExpiresAt` with ONE armed clock
 * timer for the earliest deadline. When a deadline passes, `onDue` is called with the lease (which is
 * then no longer tracked); the caller decides what to do with the store.
 *
 * Renewals are cheap: a later deadline only updates the task's record (O(1)); its heap entry fires
 * at the old time, sees the newer deadline and re-queues itself. A shorter deadline pushes a new
 * entry. Superseded and untracked entries are dropped lazily and compacted when they outnumber the
 * tracked leases, so the heap holds about one entry per tracked lease — 100k leases cost 100k small
 * objects — however many leases have come and gone before their deadlines (a busy coordinator
 * untracks thousands a second, 15 s before they would fire).
 */
import type { Clock, TimerHandle } from '../core/clock.js';
import { type HeapItem, MinHeap } from './min-heap.js';

export interface DueLease {
  taskId: string;
  version: number;
  leaseExpiresAt: number;
  /** The holder reported `executionDone`: the deadline is the end of the write-back grace. */
  writeBack: boolean;
}

/** What the services need from lease tracking; a sharded implementation can replace it (issue 3). */
export interface LeaseTracker {
  /** Watch `taskId` at `version` until `leaseExpiresAt` (replaces any earlier deadline). */
  track(taskId: string, version: number, leaseExpiresAt: number, writeBack?: boolean): void;
  /** Stop watching `taskId` (only if tracked at `version` or older, when given). */
  untrack(taskId: string, version?: number): void;
  get(taskId: string): Readonly<DueLease> | undefined;
  readonly size: number;
}

interface Entry extends HeapItem {
  taskId: string;
}

interface LeaseRecord {
  version: number;
  at: number;
  writeBack: boolean;
  /** seq and deadline of the heap entry that stands for this record. */
  seq: number;
  queuedAt: number;
}

const COMPACT_SLACK = 1024;

export class LeaseTimers implements LeaseTracker {
  private readonly heap = new MinHeap<Entry>();
  private readonly records = new Map<string, LeaseRecord>();
  private seq = 0;
  private timer: TimerHandle | null = null;
  private armedAt: number | null = null;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly onDue: (lease: DueLease) => void,
  ) {}

  get size(): number {
    return this.records.size;
  }

  /** Heap entries including superseded ones (for tests of the compaction). */
  get heapSize(): number {
    return this.heap.size;
  }

  get(taskId: string): Readonly<DueLease> | undefined {
    const r = this.records.get(taskId);
    return r && { taskId, version: r.version, leaseExpiresAt: r.at, writeBack: r.writeBack };
  }

  track(taskId: string, version: number, leaseExpiresAt: number, writeBack?: boolean): void {
    if (this.stopped) return;
    const r = this.records.get(taskId);
    const flag = writeBack ?? (r !== undefined && r.version === version && r.writeBack);
    if (r !== undefined && r.queuedAt <= leaseExpiresAt) {
      r.version = version;
      r.at = leaseExpiresAt;
      r.writeBack = flag;
      return;
    }
    const seq = ++this.seq;
    this.heap.push({ at: leaseExpiresAt, seq, taskId });
    this.records.set(taskId, { version, at: leaseExpiresAt, writeBack: flag, seq, queuedAt: leaseExpiresAt });
    this.arm();
  }

  untrack(taskId: string, version?: number): void {
    const r = this.records.get(taskId);
    if (r === undefined || (version !== undefined && r.version > version)) return;
    this.records.delete(taskId);
    this.compactIfStale();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = null;
    this.armedAt = null;
    this.heap.clear();
    this.records.clear();
  }

  /**
   * Drop the entries that stand for no tracked lease once they outnumber the tracked ones (plus a
   * slack): O(heap) once every so many untracks or firings, so O(1) each on average. The armed timer
   * may then fire for an entry that is gone; `fire` finds nothing due and arms for the new top.
   */
  private compactIfStale(): void {
    if (this.heap.size > 2 * this.records.size + COMPACT_SLACK) {
      this.heap.filter((e) => this.records.get(e.taskId)?.seq === e.seq);
    }
  }

  private arm(): void {
    const top = this.heap.peek();
    if (top === undefined || this.stopped) return;
    if (this.armedAt !== null && this.armedAt <= top.at) return;
    this.timer?.cancel();
    this.armedAt = top.at;
    this.timer = this.clock.setTimer(top.at - this.clock.now(), () => this.fire());
  }

  private fire(): void {
    this.timer = null;
    this.armedAt = null;
    const now = this.clock.now();
    const due: DueLease[] = [];
    for (let top = this.heap.peek(); top !== undefined && top.at <= now; top = this.heap.peek()) {
      this.heap.pop();
      const r = this.records.get(top.taskId);
      if (r === undefined || r.seq !== top.seq) continue; // superseded or untracked
      if (r.at > now) {
        r.seq = ++this.seq;
        r.queuedAt = r.at;
        this.heap.push({ at: r.at, seq: r.seq, taskId: top.taskId });
        continue;
      }
      this.records.delete(top.taskId);
      due.push({ taskId: top.taskId, version: r.version, leaseExpiresAt: r.at, writeBack: r.writeBack });
    }
    this.compactIfStale();
    this.arm();
    for (const lease of due) this.onDue(lease);
  }
}
