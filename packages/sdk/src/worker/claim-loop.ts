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
 * - When the worker learns that its connection died (a heartbeat timed out), {@link ClaimLoop.interrupt}
 *   aborts the claims in flight — a long-poll on a dead keep-alive socket would otherwise wait for its
 *   whole timeout — and backs off; when the connection is back, {@link ClaimLoop.reconnect} ends the
 *   backoff (and replaces a long-poll that may sit on a dead socket).
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
  /** True while the worker considers its connection lost. */
  connectionDown(): boolean;
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
  /** The long-poll in flight was sent while the connection was down. */
  private longPollWhileDown = false;
  private carrierAbort: AbortController | undefined;
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

  /** The connection is lost: abort the claims in flight (their sockets with them) and back off. */
  interrupt(): void {
    this.longPoll?.abort(INTERRUPTED);
    this.carrierAbort?.abort(INTERRUPTED);
  }

  /**
   * The connection is back: claim now. With `replaceStale` (the outage had timeouts: connections may
   * have died silently), a long-poll sent during the outage is replaced by a fresh one. Not otherwise:
   * aborting a live long-poll risks the coordinator handing it a task just as its socket goes.
   */
  reconnect(replaceStale: boolean): void {
    if (!this.running) return;
    if (replaceStale && this.longPoll !== undefined && this.longPollWhileDown) this.longPoll.abort(RESTART);
    if (this.backoffTimer !== undefined) {
      clearTimeout(this.backoffTimer);
      this.backoffTimer = undefined;
      this.failures = 0;
    }
    this.schedule();
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
    if (items) this.carrierAbort = ac;
    else {
      this.longPoll = ac;
      this.longPollWhileDown = this.deps.connectionDown();
    }
    this.reserved += max;
    let res: ClaimResponse;
    try {
      res = await this.deps.claim(req, ac.signal);
    } catch (err) {
      this.reserved -= max;
      this.release(ac, items);
      if (items) this.deps.onUncarried(items);
      if (!this.running) return;
      if (ac.signal.aborted && ac.signal.reason === RESTART) {
        this.schedule();
        return;
      }
      if (!ac.signal.aborted) this.deps.onError(err);
      this.failures++;
      if (this.backoffTimer === undefined) {
        this.backoffTimer = setTimeout(() => {
          this.backoffTimer = undefined;
          this.schedule();
        }, this.deps.backoffMs(this.failures));
      }
      return;
    }
    this.reserved -= max;
    this.release(ac, items);
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

  private release(ac: AbortController, items: C[] | undefined): void {
    if (items) {
      if (this.carrierAbort === ac) this.carrierAbort = undefined;
    } else if (this.longPoll === ac) this.longPoll = undefined;
  }
}

/** Abort reasons: the connection died (back off), or a stale long-poll is replaced (claim again now). */
const INTERRUPTED = new Error('claim interrupted: the connection to the coordinator was lost');
const RESTART = new Error('claim replaced: the connection to the coordinator is back');

/** A long-poll claim may take its wait plus this much (at most) before it counts as hung. */
const CLAIM_GRACE_MS = 5000;

/**
 * The time limit of one claim request: a long-poll that outlives its wait by more than the grace sits
 * on a dead connection; a claim that does not wait gets the ordinary request timeout.
 */
export function claimTimeoutMs(waitMs: number, requestTimeoutMs: number): number {
  return waitMs > 0 ? waitMs + Math.min(requestTimeoutMs, CLAIM_GRACE_MS) : requestTimeoutMs;
}
