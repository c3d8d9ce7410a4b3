/**
 * The claim loop. It keeps the worker's free slots asked for and folds finished tasks into claims
 * ("complete-and-claim-next": one request completes N and claims N).
 *
 * - At most one long-poll (`waitMs`) is in flight, asking for the slots free when it was sent.
 * - Completions are batched per event-loop turn (setImmediate) and sent at once in a claim with
 *   `waitMs: 0` — never held back behind a long-poll — which also asks for the freed slots. The zero
 *   wait keeps each completion's outcome (accepted or stale) prompt; it costs one extra request only
 *   when the queue is empty, and under load every claim returns at once anyway.
 * - A completion that cannot ride a claim (no free slot, loop stopping, the claim failed, the loop
 *   backing off) goes back to the worker to be sent by `POST /complete` (and spooled if need be).
 */
import type { ClaimCompletion, ClaimRequest, ClaimResponse, Task, WriteOutcome } from '@rouse/protocol';

/** A completion waiting to be folded into a claim. */
export interface Carried {
  readonly wire: ClaimCompletion;
}

export interface ClaimLoopDeps<C extends Carried> {
  types: string[];
  concurrency: number;
  waitMs: number;
  /** Slots taken by handlers that have not settled. */
  busySlots(): number;
  claim(req: ClaimRequest, signal: AbortSignal): Promise<ClaimResponse>;
  /** Tasks claimed and started: run them (synchronously take their slots). */
  onTasks(tasks: Task[]): void;
  /** The outcomes of completions carried by a claim, in order (missing ones are undefined). */
  onCarried(items: C[], outcomes: (WriteOutcome | undefined)[]): void;
  /** Completions that could not ride a claim: send them another way. */
  onUncarried(items: C[]): void;
  /** A claim succeeded (the coordinator is reachable). */
  onReachable(): void;
  onError(err: unknown): void;
  /** Wait before the next claim after `failures` consecutive failed claims. */
  backoffMs(failures: number): number;
}

export class ClaimLoop<C extends Carried> {
  private readonly deps: ClaimLoopDeps<C>;
  private pending: C[] = [];
  private running = false;
  private scheduled = false;
  private reserved = 0;
  private longPoll: AbortController | undefined;
  private carrier: Promise<void> | undefined;
  private backoffTimer: NodeJS.Timeout | undefined;
  private failures = 0;

  constructor(deps: ClaimLoopDeps<C>) {
    this.deps = deps;
  }

  start(): void {
    this.running = true;
    this.schedule();
  }

  /** Queue a completion for the next claim (sent within this event-loop turn's batch). */
  carry(item: C): void {
    this.pending.push(item);
    this.schedule();
  }

  /** Slots may have freed up: look again. */
  schedule(): void {
    if (this.scheduled || !this.running) return;
    this.scheduled = true;
    setImmediate(this.pump);
  }

  /**
   * Stop claiming: abort the long-poll, wait for a carrying claim in flight, and hand back the
   * completions that were still waiting.
   */
  async stop(): Promise<C[]> {
    this.running = false;
    clearTimeout(this.backoffTimer);
    this.backoffTimer = undefined;
    this.longPoll?.abort();
    await this.carrier;
    const left = this.pending;
    this.pending = [];
    return left;
  }

  private readonly pump = (): void => {
    this.scheduled = false;
    if (!this.running) return;
    if (this.backoffTimer !== undefined) {
      if (this.pending.length > 0) this.deps.onUncarried(this.takePending());
      return;
    }
    if (this.pending.length > 0 && this.carrier === undefined) {
      const free = this.freeSlots();
      if (free > 0) {
        const items = this.takePending();
        this.carrier = this.send(free, 0, items).finally(() => {
          this.carrier = undefined;
        });
      } else {
        this.deps.onUncarried(this.takePending());
      }
    }
    if (this.longPoll === undefined && this.carrier === undefined) {
      const free = this.freeSlots();
      if (free > 0) void this.send(free, this.deps.waitMs, undefined);
    }
  };

  private freeSlots(): number {
    return Math.min(1000, this.deps.concurrency - this.deps.busySlots() - this.reserved);
  }

  private takePending(): C[] {
    const items = this.pending;
    this.pending = [];
    return items;
  }

  private async send(max: number, waitMs: number, items: C[] | undefined): Promise<void> {
    const req: ClaimRequest = { types: this.deps.types, max, waitMs, start: true };
    if (items) req.complete = items.map((c) => c.wire);
    const ac = new AbortController();
    if (!items) this.longPoll = ac;
    this.reserved += max;
    let res: ClaimResponse;
    try {
      res = await this.deps.claim(req, ac.signal);
    } catch (err) {
      this.reserved -= max;
      if (!items) this.longPoll = undefined;
      if (items) this.deps.onUncarried(items);
      if (ac.signal.aborted || !this.running) return;
      this.failures++;
      this.deps.onError(err);
      this.backoffTimer = setTimeout(() => {
        this.backoffTimer = undefined;
        this.schedule();
      }, this.deps.backoffMs(this.failures));
      return;
    }
    this.reserved -= max;
    if (!items) this.longPoll = undefined;
    this.failures = 0;
    if (items) {
      const outcomes = res.completed ?? [];
      this.deps.onCarried(
        items,
        items.map((c, i) => (outcomes[i]?.taskId === c.wire.taskId ? outcomes[i] : undefined)),
      );
    }
    if (res.tasks.length > 0) this.deps.onTasks(res.tasks);
    this.deps.onReachable();
    this.schedule();
  }
}
