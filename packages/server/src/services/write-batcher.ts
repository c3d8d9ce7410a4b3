/**
 * Coalesced store writes: single writes from different requests (and the watchdog's condition
 * changes) that arrive in the same event-loop turn go to the store as ONE batch call (one
 * transaction, one commit) when the turn ends
 * (`setImmediate`). Under load many requests are parsed per turn, so commits are shared; when idle a
 * write waits for nothing but the end of its own turn.
 *
 * Agent heartbeats wait a little longer (`AGENT_HEARTBEAT_LINGER_MS`, a group commit): a fleet's
 * beats arrive one per turn, spread out, and a commit costs as much as the beat's own work, so the
 * beats of the next couple of milliseconds share it. That is their whole added latency.
 *
 * Each caller gets its own result or error. A batch call that throws is all or nothing (a
 * transaction; `createTasks` by contract): unless the store is unavailable, its items are then
 * written again one by one (a few at a time), so one bad item fails alone and the others are written.
 */
import type {
  AgentHeartbeatInput,
  AgentHeartbeatResult,
  ClaimInput,
  CompleteAndClaimItem,
  CompleteAndClaimResult,
  CompleteInput,
  ConditionChange,
  ConditionRecord,
  CreatedTask,
  HeartbeatAccepted,
  HeartbeatInput,
  NewTask,
  Outcome,
  Store,
  Transitioned,
} from '../store/store.js';
import { BACKGROUND_STORE_CALLS, forEachLimited } from './limited.js';

/** Most items written per store call. */
const MAX_BATCH = 500;

/** How long the first agent heartbeat of a batch waits for others to share its commit. */
export const AGENT_HEARTBEAT_LINGER_MS = 2;

interface Pending<I, O> {
  item: I;
  resolve(value: O): void;
  reject(err: unknown): void;
}

class Coalescer<I, O> {
  private queue: Pending<I, O>[] = [];
  private scheduled = false;
  private timer: NodeJS.Timeout | undefined;

  /** `lingerMs` 0: flush when the turn ends; more: that long after the batch's first item. */
  constructor(
    private readonly write: (items: I[]) => Promise<O[]>,
    private readonly lingerMs = 0,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.queue.length >= MAX_BATCH && this.timer !== undefined) {
        clearTimeout(this.timer);
        this.timer = undefined;
        setImmediate(this.flush);
      } else if (!this.scheduled) {
        this.scheduled = true;
        if (this.lingerMs > 0) this.timer = setTimeout(this.flush, this.lingerMs);
        else setImmediate(this.flush);
      }
    });
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    this.timer = undefined;
    const all = this.queue;
    this.queue = [];
    for (let i = 0; i < all.length; i += MAX_BATCH) void this.run(all.slice(i, i + MAX_BATCH));
  };

  private async run(batch: Pending<I, O>[]): Promise<void> {
    let results: O[];
    try {
      results = await this.write(batch.map((p) => p.item));
    } catch (err) {
      if (batch.length === 1 || (err as { code?: unknown }).code === 'unavailable') {
        for (const p of batch) p.reject(err);
      } else {
        await forEachLimited(batch, BACKGROUND_STORE_CALLS, (p) => this.run([p]));
      }
      return;
    }
    for (let i = 0; i < batch.length; i++) {
      const r = results[i];
      if (r === undefined) batch[i]!.reject(new Error('the store returned fewer results than items'));
      else batch[i]!.resolve(r);
    }
  }
}

export interface WriteBatcher {
  /** One task, created in a batch with the other creates of this turn. */
  createTask(task: NewTask): Promise<CreatedTask>;
  /** One completion, written in a batch with the other completions of this turn. */
  completeTask(item: CompleteInput): Promise<Outcome<Transitioned>>;
  /**
   * One request's completions and the claim that follows them, written in one transaction with the
   * other requests' of this turn when the store offers that (`completeAndClaimMany`); the store must
   * offer `completeAndClaim`.
   */
  completeAndClaim(complete: CompleteInput[], claim: ClaimInput): Promise<CompleteAndClaimResult>;
  /** One task heartbeat (a lease renewal), written with the other task heartbeats of this turn. */
  taskHeartbeat(beat: HeartbeatInput): Promise<Outcome<HeartbeatAccepted>>;
  /**
   * One agent's heartbeat, written with the other agents' of this turn; resolves to the commands it
   * took and its watch state, or null when the agent is not active in that incarnation.
   */
  agentHeartbeat(input: AgentHeartbeatInput): Promise<AgentHeartbeatResult | null>;
  /** One condition opened or closed, with the other changes of this turn. */
  conditionChange(change: ConditionChange): Promise<ConditionRecord | null>;
}

/** The store writes the batcher makes. */
export type BatchedWrites = Pick<
  Store,
  | 'createTasks'
  | 'completeTasks'
  | 'completeAndClaim'
  | 'completeAndClaimMany'
  | 'recordHeartbeats'
  | 'recordAgentHeartbeats'
  | 'applyConditionChanges'
>;

export function createWriteBatcher(store: BatchedWrites): WriteBatcher {
  const creates = new Coalescer<NewTask, CreatedTask>((tasks) => store.createTasks(tasks));
  const completes = new Coalescer<CompleteInput, Outcome<Transitioned>>((items) =>
    store.completeTasks(items),
  );
  const completeAndClaim = (item: CompleteAndClaimItem): Promise<CompleteAndClaimResult> => {
    if (store.completeAndClaim === undefined) throw new Error('the store offers no completeAndClaim');
    return store.completeAndClaim(item.complete, item.claim);
  };
  const manyCompleteAndClaim = store.completeAndClaimMany?.bind(store);
  const completeAndClaims =
    manyCompleteAndClaim === undefined
      ? null
      : new Coalescer<CompleteAndClaimItem, CompleteAndClaimResult>(manyCompleteAndClaim);
  const taskBeats = new Coalescer<HeartbeatInput, Outcome<HeartbeatAccepted>>((beats) =>
    store.recordHeartbeats(beats),
  );
  const agentBeats = new Coalescer<AgentHeartbeatInput, AgentHeartbeatResult | null>(
    (inputs) => store.recordAgentHeartbeats(inputs),
    AGENT_HEARTBEAT_LINGER_MS,
  );
  const conditions = new Coalescer<ConditionChange, ConditionRecord | null>((changes) =>
    store.applyConditionChanges(changes),
  );
  return {
    createTask: (task) => creates.submit(task),
    completeTask: (item) => completes.submit(item),
    completeAndClaim: (complete, claim) =>
      completeAndClaims === null
        ? completeAndClaim({ complete, claim })
        : completeAndClaims.submit({ complete, claim }),
    taskHeartbeat: (beat) => taskBeats.submit(beat),
    agentHeartbeat: (input) => agentBeats.submit(input),
    conditionChange: (change) => conditions.submit(change),
  };
}
