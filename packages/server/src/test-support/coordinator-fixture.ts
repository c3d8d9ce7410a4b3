/**
 * Test support for the coordinator's tests (not a test itself): a ManualClock, a real SQLite store
 * (`:memory:`), a started coordinator, and helpers that drive agents through it. Time moves only
 * through `advance`, which also waits for the work the timers started.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  ClaimRequest,
  CreateTaskRequest,
  RegisterAgentRequest,
  RegisterAgentResponse,
  StreamEvent,
  Task,
} from '@rouse/protocol';
import { pino } from 'pino';
import { ManualClock } from '../core/clock.js';
import { parsePolicies } from '../core/policies/load-policies.js';
import type { Caller } from '../services/coordinator.js';
import type { CoordinatorOptions } from '../services/coordinator-options.js';
import { type CoordinatorService, createCoordinator } from '../services/create-coordinator.js';
import { fixedPolicies } from '../services/policy-registry.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store } from '../store/store.js';

export const TOKENS = {
  admin: 'test-admin-token',
  enrollment: 'test-enroll-token',
  readonly: 'test-read-token',
};
export const ADMIN: Caller = { kind: 'admin' };
export const READONLY: Caller = { kind: 'readonly' };
export const ENROLLMENT: Caller = { kind: 'enrollment' };

export interface FixtureAgent {
  agentId: string;
  token: string;
  caller: Caller;
}

/** Let every pending promise continuation run. */
export const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export interface CoordinatorFixture {
  clock: ManualClock;
  store: Store;
  coordinator: CoordinatorService;
  events: StreamEvent[];
  blobDir: string;
  /** Move time forward and wait for what the timers started (expiries, wake-ups, claims). */
  advance(ms: number): Promise<void>;
  /** Move the clock forward in steps, as real time would pass (each step lets timers' work finish). */
  tick(ms: number, step?: number): Promise<void>;
  register(types?: string[]): Promise<FixtureAgent>;
  /** Register an agent of this type (task type `t`), with its registration's answer. */
  registerAs(
    agentType: string,
    extra?: Partial<RegisterAgentRequest>,
  ): Promise<{ agent: FixtureAgent; registration: RegisterAgentResponse }>;
  create(req?: Partial<CreateTaskRequest>): Promise<Task>;
  /** One claim that must return exactly one task. */
  claimOne(agent: FixtureAgent, req?: Partial<ClaimRequest>): Promise<Task>;
  /** Create, claim and start a task. */
  running(agent: FixtureAgent, req?: Partial<CreateTaskRequest>): Promise<Task>;
  task(id: string): Promise<Task>;
  /** A second coordinator on the same store (a restart). */
  restart(options?: Partial<CoordinatorOptions>): Promise<CoordinatorService>;
  close(): Promise<void>;
}

/**
 * `wrapStore` puts something between the coordinators and the store (a test counting calls); the
 * fixture's own `store` stays the store itself.
 */
export async function createFixture(
  options: Partial<CoordinatorOptions> = {},
  wrapStore: (store: Store) => Store = (s) => s,
): Promise<CoordinatorFixture> {
  const clock = new ManualClock(1_700_000_000_000);
  const store = createSqliteStore({ path: ':memory:', clock });
  const served = wrapStore(store);
  const dir = await mkdtemp(join(tmpdir(), 'rouse-coord-'));
  const blobDir = join(dir, 'blobs');
  const make = (over: Partial<CoordinatorOptions>) =>
    createCoordinator({
      store: served,
      clock,
      logger: pino({ level: 'silent' }),
      blobDir,
      tokens: TOKENS,
      ...options,
      ...over,
    });
  const coordinators: CoordinatorService[] = [];
  const coordinator = make({});
  coordinators.push(coordinator);
  await coordinator.start();
  const events: StreamEvent[] = [];
  coordinator.subscribe((e) => events.push(e));

  const f: CoordinatorFixture = {
    clock,
    store,
    coordinator,
    events,
    blobDir,
    async advance(ms) {
      clock.advance(ms);
      for (let i = 0; i < 3; i++) {
        await settle();
        await Promise.all(coordinators.map((c) => c.whenIdle()));
        // Timers armed meanwhile for a moment already reached fire now, as a real clock would.
        clock.advance(0);
      }
      await settle();
    },
    async tick(ms, step = 100) {
      for (let done = 0; done < ms; done += step) await f.advance(Math.min(step, ms - done));
    },
    async registerAs(agentType, extra = {}) {
      const r = await coordinator.registerAgent(ENROLLMENT, { agentType, taskTypes: ['t'], ...extra });
      const agent: FixtureAgent = {
        agentId: r.agent.id,
        token: r.token,
        caller: { kind: 'agent', agentId: r.agent.id, incarnation: r.incarnation, agentType },
      };
      return { agent, registration: r };
    },
    async register(types = ['t']) {
      const r = await coordinator.registerAgent(ENROLLMENT, { agentType: 'test', taskTypes: types });
      return {
        agentId: r.agent.id,
        token: r.token,
        caller: {
          kind: 'agent',
          agentId: r.agent.id,
          incarnation: r.incarnation,
          agentType: r.agent.agentType,
        },
      };
    },
    async create(req = {}) {
      return (await coordinator.createTask(ADMIN, { type: 't', payload: { n: 1 }, ...req })).task;
    },
    async claimOne(agent, req = {}) {
      const r = await coordinator.claim(agent.caller, agent.agentId, { types: ['t'], max: 1, ...req });
      if (r.tasks.length !== 1) throw new Error(`expected one claimed task, got ${r.tasks.length}`);
      return r.tasks[0]!;
    },
    async running(agent, req = {}) {
      const created = await f.create(req);
      const claimed = await f.claimOne(agent, { types: [created.type] });
      if (claimed.id !== created.id) throw new Error('claimed an unexpected task');
      return coordinator.startTask(agent.caller, claimed.id, claimed.version);
    },
    task: (id) => coordinator.getTask(ADMIN, id),
    async restart(over = {}) {
      const c = make(over);
      coordinators.push(c);
      await c.start();
      return c;
    },
    async close() {
      for (const c of coordinators) await c.stop();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return f;
}

/** A fixture whose coordinator applies the policies of this YAML (errors named by line and field). */
export async function createFixtureWithPolicies(
  yaml: string,
  options: Partial<CoordinatorOptions> = {},
  wrapStore?: (store: Store) => Store,
): Promise<CoordinatorFixture> {
  const parsed = parsePolicies(yaml, 'test.yaml');
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => `${e.line}: ${e.path}: ${e.message}`).join('\n'));
  return createFixture({ policies: fixedPolicies(parsed.set), ...options }, wrapStore);
}
