/**
 * Several coordinators on one store, with a manual clock (issue 3, services side): lease shards split
 * between the live coordinators and move to a survivor when their owner dies, which then expires the
 * dead one's leases (balancing itself: shard-balance.test.ts); claimable work wakes
 * long-polls on the other coordinator (now and after a backoff); a coordinator whose clock is minutes
 * off expires nothing early or late; a store outage answers `unavailable` and expires nothing, and
 * leases get a grace when the store is back.
 *
 * One SQLite store instance stands for the shared database: its claimable notices reach every
 * coordinator subscribed to it, as PostgreSQL's NOTIFY would. A "cut" store fails every call with
 * `unavailable`, as a coordinator that lost the database (or died, to the others) would see it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CreateTaskRequest } from '@rouse/protocol';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type Clock, ManualClock } from '../core/clock.js';
import { UnavailableError } from '../core/errors.js';
import { LEASE_SHARD_COUNT } from '../store/lease-shards.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store } from '../store/store.js';
import { ADMIN, ENROLLMENT, settle, TOKENS } from '../test-support/coordinator-fixture.js';
import { storeCallCounter } from '../test-support/store-call-counter.js';
import type { CoordinatorOptions } from './coordinator-options.js';
import { type CoordinatorService, createCoordinator } from './create-coordinator.js';
import { BACKGROUND_STORE_CALLS } from './limited.js';
import { skewedClock } from './store-clock.js';

interface Cuttable {
  store: Store;
  cut: boolean;
  /** Calls that reached the store while it was cut. */
  failed: number;
}

/** A view of `store` that fails every call with `unavailable` while `cut` is set. */
function cuttable(store: Store): Cuttable {
  const c: Cuttable = { cut: false, store, failed: 0 };
  c.store = new Proxy(store, {
    get(target, prop, receiver) {
      const v: unknown = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function' || prop === 'onClaimable' || prop === 'close') return v;
      return (...args: unknown[]) => {
        if (!c.cut) return (v as (...a: unknown[]) => unknown).apply(target, args);
        c.failed++;
        return Promise.reject(new UnavailableError('the store is unreachable (cut by the test)'));
      };
    },
  });
  return c;
}

let clock: ManualClock;
let shared: Store;
let dir: string;
let coordinators: CoordinatorService[] = [];

async function setup(): Promise<void> {
  clock = new ManualClock(1_700_000_000_000);
  shared = createSqliteStore({ path: ':memory:', clock });
  dir = await mkdtemp(join(tmpdir(), 'rouse-several-'));
  coordinators = [];
}

type CoordinatorOver = Partial<CoordinatorOptions> & { store?: Store; localClock?: Clock };

/** A coordinator on the shared store, not started yet (stopped after the test). */
function unstarted(over: CoordinatorOver = {}): CoordinatorService {
  const { localClock, ...rest } = over;
  const c = createCoordinator({
    store: shared,
    clock: localClock ?? clock,
    logger: pino({ level: 'silent' }),
    blobDir: join(dir, 'blobs'),
    tokens: TOKENS,
    ...rest,
  });
  coordinators.push(c);
  return c;
}

async function coordinator(over: CoordinatorOver = {}): Promise<CoordinatorService> {
  const c = unstarted(over);
  await c.start();
  return c;
}

/** Move time in steps of at most 250 ms, letting the work each step started finish. */
async function advance(ms: number): Promise<void> {
  for (let left = ms; ; ) {
    const step = Math.min(left, 250);
    clock.advance(step);
    left -= step;
    for (let i = 0; i < 3; i++) {
      await settle();
      await Promise.all(coordinators.map((c) => c.whenIdle()));
      clock.advance(0);
    }
    if (left <= 0) break;
  }
  await settle();
}

async function agentOn(c: CoordinatorService, types = ['t']) {
  const r = await c.registerAgent(ENROLLMENT, { agentType: 'test', taskTypes: types });
  return {
    agentId: r.agent.id,
    caller: {
      kind: 'agent' as const,
      agentId: r.agent.id,
      incarnation: r.incarnation,
      agentType: r.agent.agentType,
    },
  };
}

async function runningOn(
  c: CoordinatorService,
  agent: Awaited<ReturnType<typeof agentOn>>,
  req: Partial<CreateTaskRequest> = {},
) {
  const { task } = await c.createTask(ADMIN, { type: 't', payload: {}, ...req });
  const r = await c.claim(agent.caller, agent.agentId, { types: ['t'], max: 1 });
  expect(r.tasks.map((t) => t.id)).toEqual([task.id]);
  return c.startTask(agent.caller, task.id, r.tasks[0]!.version);
}

/**
 * A task running on `on` fails with a retry (backoff 1 s) while another agent long-polls through
 * `waitOn` for up to a minute: what that claim got (null while it waits) and when the retry is due.
 */
async function retryAwaited(on: CoordinatorService, waitOn: CoordinatorService) {
  const worker = await agentOn(on);
  const t = await runningOn(on, worker);
  const agent = await agentOn(waitOn);
  let got: string[] | null = null;
  const waiting = waitOn.claim(agent.caller, agent.agentId, { types: ['t'], waitMs: 60_000 }).then((r) => {
    got = r.tasks.map((x) => x.id);
  });
  await on.failTask(worker.caller, t.id, {
    version: t.version,
    error: { code: 'boom', message: 'try again', retryable: true },
  });
  const due = (await on.getTask(ADMIN, t.id)).nextAttemptAt!;
  await new Promise((r) => setImmediate(r));
  return { taskId: t.id, due, waiting, got: () => got };
}

afterEach(async () => {
  for (const c of coordinators) await c.stop();
  await shared.close();
  await rm(dir, { recursive: true, force: true });
});

describe('several coordinators on one store', () => {
  it("a second coordinator started with a live one's id is refused, and leaves the live one's shards alone", async () => {
    await setup();
    const a = await coordinator({ coordinatorId: 'same', shardLeaseTtlMs: 3000 });
    expect(a.stats().shards.ids).toHaveLength(LEASE_SHARD_COUNT);
    const twin = unstarted({ coordinatorId: 'same', shardLeaseTtlMs: 3000 });
    const starting = twin.start();
    const refused = expect(starting).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/another live coordinator goes by the id "same"/),
    });
    await advance(3500); // a renews meanwhile
    await refused;
    await twin.stop();
    // a still holds every shard, and its presence stands
    expect(
      (await shared.listShardLeases()).every((l) => l.ownerId === 'same' && l.expiresAt > clock.now()),
    ).toBe(true);
    expect((await shared.listCoordinators()).map((c) => c.id)).toEqual(['same']);
    await advance(1000);
    expect(a.stats().shards.ids).toHaveLength(LEASE_SHARD_COUNT);
  });

  it('two coordinators started at once under one id: one runs, the other is refused', async () => {
    await setup();
    const [a, b] = [
      unstarted({ coordinatorId: 'same', shardLeaseTtlMs: 3000 }),
      unstarted({ coordinatorId: 'same', shardLeaseTtlMs: 3000 }),
    ];
    const starts = Promise.allSettled([a.start(), b.start()]);
    await advance(3500);
    const results = await starts;
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const running = results[0]!.status === 'fulfilled' ? a : b;
    expect(running.stats().shards.ids).toHaveLength(LEASE_SHARD_COUNT);
  });

  it('a coordinator whose id was taken over while it was cut off holds nothing, and its stop frees nothing', async () => {
    await setup();
    const cut = cuttable(shared);
    const old = await coordinator({ store: cut.store, coordinatorId: 'fixed', shardLeaseTtlMs: 3000 });
    cut.cut = true; // partitioned: it cannot renew, its presence and shards lapse
    const successor = unstarted({ coordinatorId: 'fixed', shardLeaseTtlMs: 3000 });
    const starting = successor.start();
    await advance(4000);
    await starting;
    cut.cut = false; // back: its next renewal finds the id taken
    await advance(1500);
    expect(old.stats().shards.ids).toEqual([]);
    expect(successor.stats().shards.ids).toHaveLength(LEASE_SHARD_COUNT);
    await old.stop();
    expect((await shared.listShardLeases()).every((l) => l.expiresAt > clock.now())).toBe(true);
    expect((await shared.listCoordinators()).map((c) => c.id)).toEqual(['fixed']);
  });

  it('a coordinator restarted under the id of one that died waits for its presence to lapse, then takes over', async () => {
    await setup();
    const cut = cuttable(shared);
    await coordinator({ store: cut.store, coordinatorId: 'fixed', shardLeaseTtlMs: 3000 });
    cut.cut = true; // it died: it renews nothing any more
    const successor = unstarted({ coordinatorId: 'fixed', shardLeaseTtlMs: 3000 });
    let started = false;
    const starting = successor.start().then(() => {
      started = true;
    });
    await advance(1000);
    expect(started).toBe(false); // the dead one's presence has not lapsed yet
    await advance(3000);
    await starting;
    expect(successor.stats().shards.ids).toHaveLength(LEASE_SHARD_COUNT);
  });

  it('two split the shards; when one dies the survivor takes them all and expires its leases', async () => {
    await setup();
    const cutA = cuttable(shared);
    const a = await coordinator({ store: cutA.store, coordinatorId: 'a', shardLeaseTtlMs: 3000 });
    const b = await coordinator({ coordinatorId: 'b', shardLeaseTtlMs: 3000 });
    expect(a.stats().shards.ids).toHaveLength(LEASE_SHARD_COUNT);
    expect(b.stats().shards.ids).toHaveLength(0);
    // Both have run a while: they split the shards evenly, and a shard b gains from now on is a
    // takeover, not a restart (no grace).
    await advance(7000);
    expect(a.stats().shards.ids).toEqual([...Array(32).keys()]);
    expect(b.stats().shards.ids).toEqual([...Array(32).keys()].map((s) => s + 32));

    const agent = await agentOn(a);
    const t = await runningOn(a, agent); // granted by a: only a has a timer for it
    expect(b.stats().trackedLeases).toBe(0);

    cutA.cut = true; // a loses the database (to b, a is dead)
    await advance(3000 + 1000);
    expect(b.stats().shards.ids).toHaveLength(LEASE_SHARD_COUNT);
    expect((await shared.listShardLeases()).every((l) => l.ownerId === 'b' && l.epoch === 2)).toBe(true);

    // b found the lease through its sweep, by the store's clock, once it was due.
    await advance(15_000 - 4000 - 1);
    expect((await b.getTask(ADMIN, t.id)).status).toBe('running');
    await advance(1 + 1000);
    const after = await b.getTask(ADMIN, t.id);
    expect(after.status).toBe('timeout');
    const events = await b.listTaskEvents(ADMIN, t.id);
    expect(events.filter((e) => e.to === 'timeout')).toHaveLength(1);
    expect(events.at(-1)!.at - (t.leaseExpiresAt ?? 0)).toBeLessThanOrEqual(1000);
  });

  it('progress reported through one coordinator counts on the other (the stall clock is in the store)', async () => {
    await setup();
    const a = await coordinator({ coordinatorId: 'a' });
    const b = await coordinator({ coordinatorId: 'b' });
    const agent = await agentOn(a);
    const stallTimeoutMs = 20_000;
    const t = await runningOn(a, agent, { timing: { stallTimeoutMs } }); // started through a
    // Heartbeats with moving progress, all through b, for longer than the stall timeout.
    for (let at = 0, i = 1; at <= stallTimeoutMs; at += 4000, i++) {
      await b.heartbeatTask(agent.caller, t.id, { version: t.version, progress: i / 1000 });
      await advance(4000);
    }
    const codes = async (c: CoordinatorService) => (await c.diagnose(ADMIN, t.id)).reasons.map((r) => r.code);
    expect(await codes(a)).toEqual(['running_normally']);
    expect(await codes(b)).toEqual(['running_normally']);
    const last = await a.getTask(ADMIN, t.id);
    expect(last.progressChangedAt).toBe(clock.now() - 4000);
    // Then heartbeats through b stop moving it: both see the stall after the stall timeout.
    for (let at = 0; at <= stallTimeoutMs; at += 4000) {
      await b.heartbeatTask(agent.caller, t.id, { version: t.version, progress: last.progress! });
      await advance(4000);
    }
    expect(await codes(a)).toEqual(['progress_stalled']);
    expect(await codes(b)).toEqual(['progress_stalled']);
  });

  it('a command queued through one coordinator reaches the agent through the other, once', async () => {
    await setup();
    const a = await coordinator({ coordinatorId: 'a' });
    const b = await coordinator({ coordinatorId: 'b' });
    const agent = await agentOn(a);
    const t = await runningOn(a, agent);
    const checkpoint = await a.sendCommand(ADMIN, agent.agentId, {
      type: 'checkpoint',
      reason: 'operator asked',
    });
    await a.cancelTask(ADMIN, t.id, 'not needed any more');
    await advance(0);
    // The agent's heartbeats all land on b.
    const beat = await b.agentHeartbeat(agent.caller, agent.agentId, {
      tasks: [{ taskId: t.id, version: t.version }],
    });
    expect(beat.tasks).toEqual([{ taskId: t.id, ok: false, code: 'cancelled' }]);
    expect(beat.commands).toEqual([
      { type: 'checkpoint', reason: 'operator asked', id: checkpoint.commandId },
      { type: 'cancel', taskId: t.id, reason: 'not needed any more', id: expect.stringMatching(/^cmd_/) },
    ]);
    expect((await a.agentHeartbeat(agent.caller, agent.agentId, {})).commands).toEqual([]);
    expect((await b.agentHeartbeat(agent.caller, agent.agentId, {})).commands).toEqual([]);
  });

  it('a dependency reported down through one coordinator stops the claims of the other, until it is up', async () => {
    await setup();
    const a = await coordinator({ coordinatorId: 'a' });
    const b = await coordinator({ coordinatorId: 'b' });
    const reporter = await agentOn(b);
    const claimer = await agentOn(a);
    const { task } = await a.createTask(ADMIN, { type: 't', payload: {}, requires: ['openai'] });
    await b.agentHeartbeat(reporter.caller, reporter.agentId, {
      dependencies: [{ name: 'openai', state: 'rate_limited', retryAfterMs: 60_000 }],
    });
    await advance(1000); // a reads what b saved
    expect((await a.claim(claimer.caller, claimer.agentId, { types: ['t'] })).tasks).toEqual([]);
    expect((await a.diagnose(ADMIN, task.id)).reasons.map((r) => r.code)).toContain('dependency_unavailable');
    expect((await a.listDependencies(ADMIN)).map((d) => [d.name, d.state])).toEqual([
      ['openai', 'rate_limited'],
    ]);
    // A long-poll on a wakes when b hears the dependency is back.
    let got: string[] | null = null;
    const waiting = a.claim(claimer.caller, claimer.agentId, { types: ['t'], waitMs: 30_000 }).then((r) => {
      got = r.tasks.map((t) => t.id);
    });
    await advance(2000);
    expect(got).toBeNull();
    await b.agentHeartbeat(reporter.caller, reporter.agentId, {
      dependencies: [{ name: 'openai', state: 'up' }],
    });
    await advance(1000);
    await waiting;
    expect(got).toEqual([task.id]);
  });

  it('a log follower on one coordinator sees lines appended through the other', async () => {
    await setup();
    const a = await coordinator({ coordinatorId: 'a' });
    const b = await coordinator({ coordinatorId: 'b' });
    const agent = await agentOn(b);
    const t = await runningOn(b, agent);
    let woke = false;
    const ac = new AbortController();
    const waiting = a.waitForLogs(t.id, 0, ac.signal).then(() => {
      woke = true;
    });
    await advance(500);
    expect(woke).toBe(false);
    await b.appendLogs(agent.caller, t.id, {
      version: t.version,
      lines: [{ stream: 'stdout', text: 'hello' }],
    });
    await advance(1000); // a looks again within logFollowPollMs (1 s)
    expect(woke).toBe(true);
    await waiting;
    expect((await a.readLogs(ADMIN, t.id, 0)).lines.map((l) => l.text)).toEqual(['hello']);
  });

  it("a client of one coordinator's event stream hears what the other does, relayed only while it listens", async () => {
    await setup();
    const a = await coordinator({ coordinatorId: 'a' });
    const b = await coordinator({ coordinatorId: 'b' });
    const agent = await agentOn(b);
    await runningOn(b, agent);
    await advance(2000);
    expect(b.stats().streamNotices.published).toBe(0); // nobody listens anywhere

    const heard: string[] = [];
    const created: string[] = [];
    const others: string[] = [];
    const local: string[] = [];
    const unsubscribe = a.subscribe(
      (e) => {
        if (e.type === 'task.transition') heard.push(`${e.event.seq}:${e.event.to}:${e.task.status}`);
        else if (e.type === 'task.created') created.push(e.task.id);
        else if (e.type === 'task.progress') others.push(`progress:${e.taskId}:${e.progress}:${e.phase}`);
        else if (e.type === 'agent.registered') others.push(`${e.type}:${e.agent.id}`);
        else if (e.type === 'agent.status') others.push(`${e.type}:${e.agent.id}:${e.agent.status}`);
        else if (e.type === 'intervention')
          others.push(`${e.type}:${e.intervention.action}:${e.intervention.state}`);
        else if (e.type === 'alert')
          others.push(`${e.type}:${e.alert.group.condition}:${e.alert.agentIds.length}`);
      },
      { everyCoordinator: true },
    );
    a.subscribe((e) => {
      if (e.type === 'task.transition') local.push(e.task.id);
    }); // like the metrics: this coordinator's own events only
    await advance(4000); // a announces it listens, then b reads it: within two renewals
    const t = await runningOn(b, agent);
    await b.heartbeatTask(agent.caller, t.id, { version: t.version, progress: 0.5, phase: 'halfway' });
    await b.completeTask(agent.caller, t.id, { version: t.version, result: { ok: true } });
    const second = await agentOn(b);
    await b.agentHeartbeat(second.caller, second.agentId, { status: 'running' });
    await advance(0);
    await new Promise((r) => setImmediate(r));
    await b.sendCommand(ADMIN, second.agentId, { type: 'wake' });
    await b.alerts.raise({
      agentId: second.agentId,
      agentType: 'test',
      condition: 'progress_stalled',
      severity: 'low',
      summary: 'stalled',
      source: 'manual',
    });
    await advance(0);
    await new Promise((r) => setImmediate(r));
    await advance(0);
    expect(others).toEqual([
      `progress:${t.id}:0.5:halfway`,
      `agent.registered:${second.agentId}`,
      `agent.status:${second.agentId}:running`,
      'intervention:wake:pending',
      'alert:progress_stalled:1',
    ]);
    // Each with the task as it was read when its notice arrived.
    expect(created).toEqual([t.id]);
    expect(heard.map((h) => h.split(':').slice(0, 2).join(':'))).toEqual([
      '2:claimed',
      '3:running',
      '4:completed',
    ]);
    expect(heard.at(-1)).toBe('4:completed:completed');
    expect(local).toEqual([]);
    expect(b.stats().streamNotices.published).toBeGreaterThanOrEqual(1);
    expect(a.stats().streamNotices.received).toBeGreaterThanOrEqual(1);

    // The client leaves: b stops relaying after its next renewal.
    unsubscribe();
    await advance(4000);
    const published = b.stats().streamNotices.published;
    await runningOn(b, agent);
    await advance(500);
    expect(b.stats().streamNotices.published).toBe(published);
  });

  it('a notice naming many tasks and agents is read back a few at a time, and every event arrives', async () => {
    await setup();
    // a's view of the store counts its reads by id in flight.
    const reads = storeCallCounter(['getTask', 'getAgent']);
    const a = await coordinator({ coordinatorId: 'a', store: reads.wrap(shared) });
    const b = await coordinator({ coordinatorId: 'b' });
    const worker = await agentOn(b);
    const tasks = [];
    for (let i = 0; i < 20; i++) tasks.push(await runningOn(b, worker));
    const progress: string[] = [];
    const registered: string[] = [];
    a.subscribe(
      (e) => {
        if (e.type === 'task.progress') progress.push(e.taskId);
        else if (e.type === 'agent.registered') registered.push(e.agent.id);
      },
      { everyCoordinator: true },
    );
    await advance(4000); // a announces it listens, then b reads it
    // Started together: b publishes them in one notice, or in a few.
    const beats = tasks.map((t) =>
      b.heartbeatTask(worker.caller, t.id, { version: t.version, progress: 0.5 }),
    );
    const joined = Array.from({ length: 12 }, () => agentOn(b));
    await Promise.all(beats);
    const agents = await Promise.all(joined);
    for (let i = 0; i < 5; i++) {
      await advance(0);
      await new Promise((r) => setImmediate(r));
    }
    expect(progress.sort()).toEqual(tasks.map((t) => t.id).sort());
    expect(registered.sort()).toEqual(agents.map((x) => x.agentId).sort());
    expect(reads.most).toBeGreaterThan(1);
    expect(reads.most).toBeLessThanOrEqual(BACKGROUND_STORE_CALLS);
  });

  it('a graceful stop releases the shards: the other takes them at its next renewal', async () => {
    await setup();
    const a = await coordinator({ coordinatorId: 'a' });
    const b = await coordinator({ coordinatorId: 'b' });
    await advance(3 * Math.ceil(5000 / 3)); // a hands over half within two renewals (of 250 ms steps)
    expect([a.stats().shards.ids.length, b.stats().shards.ids.length]).toEqual([32, 32]);
    await a.stop();
    await advance(Math.ceil(5000 / 3));
    expect(b.stats().shards.ids).toHaveLength(LEASE_SHARD_COUNT);
  });

  it('work created on one coordinator wakes a long-poll on the other at once', async () => {
    await setup();
    const a = await coordinator({ coordinatorId: 'a' });
    const b = await coordinator({ coordinatorId: 'b' });
    const agent = await agentOn(b);
    let done = false;
    const waiting = b.claim(agent.caller, agent.agentId, { types: ['t'], waitMs: 30_000 }).then((r) => {
      done = true;
      return r;
    });
    await advance(1000);
    expect(done).toBe(false);
    const { task } = await a.createTask(ADMIN, { type: 't', payload: {} });
    await new Promise((r) => setImmediate(r)); // the relay publishes once per event-loop turn
    await advance(0);
    expect(done).toBe(true);
    expect((await waiting).tasks.map((t) => t.id)).toEqual([task.id]);
    expect(a.stats().claimableNotices.published).toBeGreaterThanOrEqual(1);
    expect(b.stats().claimableNotices.received).toBeGreaterThanOrEqual(1);
  });

  it('a coordinator alone publishes no claimable notices; with a second one it does', async () => {
    await setup();
    const a = await coordinator({ coordinatorId: 'a' });
    const worker = await agentOn(a);
    const waiting = a.claim(worker.caller, worker.agentId, { types: ['t'], waitMs: 30_000 });
    await a.createTask(ADMIN, { type: 't', payload: {} });
    await new Promise((r) => setImmediate(r));
    await advance(0);
    expect((await waiting).tasks).toHaveLength(1); // its own long-poll is woken locally
    expect(a.stats().claimableNotices.published).toBe(0);
    const b = await coordinator({ coordinatorId: 'b' });
    await new Promise((r) => setImmediate(r)); // b's start notice
    await a.createTask(ADMIN, { type: 't', payload: {} });
    await new Promise((r) => setImmediate(r));
    expect(a.stats().claimableNotices.published).toBe(1);
    // After a renewal a sees b live; once b leaves and its presence lapses, a is alone again.
    await advance(Math.ceil(5000 / 3));
    await b.stop();
    await advance(5000);
    await a.createTask(ADMIN, { type: 't', payload: {} });
    await new Promise((r) => setImmediate(r));
    expect(a.stats().claimableNotices.published).toBe(1);
  });

  it('a requeue with backoff on one coordinator wakes a long-poll on the other when the backoff ends', async () => {
    await setup();
    const a = await coordinator({ coordinatorId: 'a' });
    const b = await coordinator({ coordinatorId: 'b' });
    const r = await retryAwaited(a, b);
    expect(r.due).toBe(clock.now() + 1000);
    await advance(999);
    expect(r.got()).toBeNull();
    await advance(1);
    await r.waiting;
    expect(r.got()).toEqual([r.taskId]);
  });

  it('a long-poll woken a moment before the store sees a retry as due looks again soon, not at its end', async () => {
    await setup();
    // The coordinator's estimate of the store's clock runs 3 ms ahead (an offset estimate is never
    // exact): its backoff timer fires, and the waiting claim looks, while the store still has the
    // task in its backoff.
    const c = await coordinator({ localClock: skewedClock(clock, 3), clockSyncIntervalMs: null });
    const r = await retryAwaited(c, c);
    expect(r.due).toBe(clock.now() + 1000);
    await advance(997); // the coordinator's clock reads `due`: its timer fires, the store says not yet
    expect(r.got()).toBeNull();
    for (let i = 0; i < 10 && r.got() === null; i++) await advance(5);
    expect(r.got()).toEqual([r.taskId]); // within 50 ms of `due`, not at the end of the minute's wait
    await r.waiting;
  });

  it("a retry that becomes due between a claim's look and its read of what is due next is not missed", async () => {
    await setup();
    // The store's clock moves 3 ms while the claim is between its two reads (a busy database).
    let slowRead = false;
    const store = new Proxy(shared, {
      get(target, prop, receiver) {
        const v: unknown = Reflect.get(target, prop, receiver);
        if (prop !== 'nextClaimableAt' || typeof v !== 'function') return v;
        return (...args: unknown[]) => {
          if (slowRead) clock.advance(3);
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const c = await coordinator({ store, localClock: skewedClock(clock, 2), clockSyncIntervalMs: null });
    const r = await retryAwaited(c, c);
    slowRead = true;
    await advance(998); // the coordinator's timer fires; its look finds the retry 2 ms short of due
    slowRead = false;
    for (let i = 0; i < 10 && r.got() === null; i++) await advance(5);
    expect(r.got()).toEqual([r.taskId]);
    expect(clock.now() - r.due).toBeLessThan(50);
    await r.waiting;
  });

  it('a coordinator whose clock is minutes off expires leases on time, never early', async () => {
    await setup();
    const skewMs = 5 * 60_000;
    const c = await coordinator({ localClock: skewedClock(clock, skewMs), clockSyncIntervalMs: 5000 });
    expect(c.stats().clockOffsetMs).toBe(-skewMs);
    const agent = await agentOn(c);
    const t = await runningOn(c, agent);
    await advance(14_999);
    expect((await c.getTask(ADMIN, t.id)).status).toBe('running');
    await advance(1);
    const events = await c.listTaskEvents(ADMIN, t.id);
    expect(events.at(-1)).toMatchObject({ to: 'timeout', at: t.leaseExpiresAt });
  });

  it('without the correction, a clock minutes behind is still caught by the sweep on the store clock', async () => {
    await setup();
    const c = await coordinator({ localClock: skewedClock(clock, -5 * 60_000), clockSyncIntervalMs: null });
    expect(c.stats().clockOffsetMs).toBe(0);
    const agent = await agentOn(c);
    const t = await runningOn(c, agent);
    await advance(14_999);
    expect((await c.getTask(ADMIN, t.id)).status).toBe('running');
    await advance(1000);
    expect((await c.getTask(ADMIN, t.id)).status).toBe('timeout');
  });

  it('a store outage: calls answer unavailable, nothing expires, and leases get a grace after', async () => {
    await setup();
    const cut = cuttable(shared);
    const c = await coordinator({ store: cut.store, storeProbeIntervalMs: 500 });
    const agent = await agentOn(c);
    const t = await runningOn(c, agent);
    cut.cut = true;
    await expect(c.getTask(ADMIN, t.id)).rejects.toMatchObject({ code: 'unavailable' });
    await settle(); // a ping confirms the outage
    expect(c.stats().storeUp).toBe(false);
    // Confirmed: calls are refused at once, without reaching the store (or waiting for it).
    const reached = cut.failed;
    await expect(c.getTask(ADMIN, t.id)).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringMatching(/^the store has been unreachable for \d+\.\d s; retry shortly$/),
    });
    await expect(c.ready()).rejects.toMatchObject({ code: 'unavailable' });
    expect(cut.failed).toBe(reached);
    await advance(20_000); // far past the lease
    expect((await shared.getTask(t.id))!.status).toBe('running');
    cut.cut = false;
    await advance(500);
    expect(c.stats().storeUp).toBe(true);
    await c.ready();
    const backAt = clock.now();
    await advance(14_000);
    expect((await c.getTask(ADMIN, t.id)).status).toBe('running');
    await advance(1500);
    const events = await c.listTaskEvents(ADMIN, t.id);
    expect(events.at(-1)).toMatchObject({ to: 'timeout' });
    expect(events.at(-1)!.at - backAt).toBeGreaterThanOrEqual(15_000);
  });
});
