/**
 * Shared fixtures for the Store contract suite: a fresh store and manual clock per test, task
 * builders, and shortcuts to put a task in a given state through the store's own operations.
 */
import type { Task, TaskEvent, Timing } from '@rouse/protocol';
import { afterEach, beforeEach, expect } from 'vitest';
import type { ResolvedBackoffOptions } from '../../core/backoff.js';
import { ManualClock } from '../../core/clock.js';
import { RouseError } from '../../core/errors.js';
import type { AgentWrite, NewTask, Store, Transitioned } from '../../store/store.js';

export type MakeStore = (clock: ManualClock) => Promise<{ store: Store; cleanup: () => Promise<void> }>;

export const T0 = 1_700_000_000_000;
/** Retry n waits 1 s × 2^(n-1): 1 s, 2 s, 4 s … */
export const BACKOFF: ResolvedBackoffOptions = { baseMs: 1000, capMs: 300_000, jitter: 0 };
/** Retries are claimable at once. */
export const NO_BACKOFF: ResolvedBackoffOptions = { baseMs: 0, capMs: 0, jitter: 0 };
export const TIMING: Timing = {
  heartbeatIntervalMs: 5000,
  heartbeatTimeoutMs: 15_000,
  claimTimeoutMs: 30_000,
  executionTimeoutMs: 600_000,
  attemptDeadlineMs: 900_000,
  stallTimeoutMs: 300_000,
};
export const GRACE_MS = 60_000;

let idCounter = 0;
/** Ids unique across the whole run (stores may be shared by property runs). */
/** A task to insert, every field at its plain default (payload `{ id }`), then `overrides`. */
export function newTask(id: string, overrides: Partial<NewTask> = {}): NewTask {
  return {
    id,
    type: 'work',
    payload: { id },
    idempotencyKey: null,
    priority: 0,
    runAt: null,
    maxAttempts: 4,
    resumable: false,
    requires: [],
    labels: {},
    timing: TIMING,
    ...overrides,
  };
}

export function uniqueId(prefix: string): string {
  idCounter += 1;
  return `${prefix}_${idCounter.toString(36).padStart(6, '0')}`;
}

export class Harness {
  constructor(
    readonly store: Store,
    readonly clock: ManualClock,
  ) {}

  newTask(overrides: Partial<NewTask> = {}): NewTask {
    return newTask(uniqueId('tsk'), { payload: { n: 1 }, ...overrides });
  }

  async create(overrides: Partial<NewTask> = {}): Promise<Task> {
    const [created] = await this.store.createTasks([this.newTask(overrides)]);
    return created!.task;
  }

  async claim(agentId: string, types: string[], max = 1, start = false): Promise<Transitioned[]> {
    return this.store.claimTasks({ agentId, types, max, start, backoff: BACKOFF });
  }

  /** Claim exactly the task `task` (it must be the only claimable one of its type). */
  async claimTask(task: Task, agentId = 'agt_a', start = false): Promise<Task> {
    const claimed = await this.claim(agentId, [task.type], 1, start);
    expect(claimed.map((c) => c.task.id)).toEqual([task.id]);
    return claimed[0]!.task;
  }

  /** A new task of a type of its own, claimed (and with `start`, running) by `agentId`. */
  async held(start: boolean, overrides: Partial<NewTask> = {}, agentId = 'agt_a'): Promise<Task> {
    const task = await this.create({ type: uniqueId('type'), ...overrides });
    return this.claimTask(task, agentId, start);
  }

  running(overrides: Partial<NewTask> = {}, agentId = 'agt_a'): Promise<Task> {
    return this.held(true, overrides, agentId);
  }

  /** Advance past the task's lease and expire it. */
  async expire(task: Task, backoff = BACKOFF): Promise<Task> {
    this.clock.set(Math.max(this.clock.now(), task.leaseExpiresAt!));
    const expired = await this.store.expireLease({ taskId: task.id, version: task.version, backoff });
    expect(expired).not.toBeNull();
    return expired!.task;
  }

  async get(id: string): Promise<Task> {
    const task = await this.store.getTask(id);
    expect(task).not.toBeNull();
    return task!;
  }

  events(id: string): Promise<TaskEvent[]> {
    return this.store.listTaskEvents(id);
  }

  /** The state of a task and its history, to prove a refused write changed nothing. */
  async snapshot(id: string): Promise<{ task: Task | null; events: TaskEvent[] }> {
    return { task: await this.store.getTask(id), events: await this.store.listTaskEvents(id) };
  }
}

export function writer(task: Task, agentId = task.agentId!): AgentWrite {
  return { taskId: task.id, agentId, version: task.version };
}

/** Expect `p` to reject with a RouseError of `code`; returns the error. */
export async function expectCode(p: Promise<unknown>, code: string): Promise<RouseError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, `expected a rejection with code ${code}`).toBeInstanceOf(RouseError);
  expect((err as RouseError).code).toBe(code);
  return err as RouseError;
}

/** Register per-test setup: a fresh store and clock; returns an accessor for the test body. */
export function useHarness(makeStore: MakeStore): () => Harness {
  let harness: Harness | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  beforeEach(async () => {
    const clock = new ManualClock(T0);
    const made = await makeStore(clock);
    harness = new Harness(made.store, clock);
    cleanup = made.cleanup;
  });
  afterEach(async () => {
    await cleanup?.();
    harness = undefined;
    cleanup = undefined;
  });
  return () => {
    if (harness === undefined) throw new Error('the store harness is only available inside a test');
    return harness;
  };
}
