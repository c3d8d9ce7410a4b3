/**
 * Agent snapshots in the SDK, against the fake coordinator: the snapshot handed over at registration,
 * a `checkpoint` command answered at the next safe point (the provider's state stored — in full,
 * then as merge patches — and the command acknowledged `done`), `unsupported` without a provider,
 * `failed` when storing fails; direct `snapshot()` / `snapshotPatch()`; the worker taking a requested
 * snapshot at a handler's safe point or at once when idle.
 */
import type { AgentHeartbeatRequest, CommandAck, JsonObject } from '@rouse/protocol';
import { describe, expect, it, onTestFinished } from 'vitest';
import { Client } from '../client.js';
import { RouseApiError } from '../errors.js';
import { type Monitor, monitor } from '../monitor/monitor.js';
import type { MonitorOptions } from '../monitor/options.js';
import { type FakeCoordinator, startFakeCoordinator } from '../test-support/fake-coordinator.js';
import { deferred, startHarness, within } from '../test-support/harness.js';

async function startMonitor(
  options: Partial<MonitorOptions> = {},
  setup?: (fake: FakeCoordinator) => void,
): Promise<{ fake: FakeCoordinator; m: Monitor }> {
  const fake = await startFakeCoordinator();
  setup?.(fake);
  const m = monitor({
    url: fake.url,
    token: 'enroll-token',
    agentType: 'chat-bot',
    heartbeatIntervalMs: 20,
    shutdownSignals: false,
    retry: { attempts: 2, baseDelayMs: 5, maxDelayMs: 20 },
    ...options,
  });
  onTestFinished(async () => {
    await m.stop();
    await fake.close();
  });
  await m.start();
  return { fake, m };
}

/** Every answer sent so far: on calls of their own, and in heartbeats. */
const allAcks = (fake: FakeCoordinator): CommandAck[] => [
  ...fake.ackCalls.flat(),
  ...fake.agentBeats().flatMap((b: AgentHeartbeatRequest) => b.acks ?? []),
];

/** The acknowledgement of `commandId` once it was sent. */
async function ackOf(fake: FakeCoordinator, commandId: string): Promise<CommandAck> {
  const find = () => allAcks(fake).find((a) => a.commandId === commandId);
  await within(
    5000,
    fake.waitUntil(() => find() !== undefined),
    `the ack of ${commandId}`,
  );
  return find()!;
}

/** Wait until the monitor received the delivered commands (a heartbeat answered after they were queued). */
async function delivered(fake: FakeCoordinator): Promise<void> {
  const from = fake.requests.length;
  await within(
    5000,
    fake.waitForRequest((r) => r.path.endsWith('/heartbeat'), from + 1),
    'a heartbeat after the command',
  );
  await within(
    5000,
    fake.waitForRequest((r) => r.path.endsWith('/heartbeat'), fake.requests.length),
    'the next heartbeat',
  );
}

const snapshotWrites = (fake: FakeCoordinator) =>
  fake.requests.filter((r) => r.path.endsWith('/snapshot') && r.method !== 'GET');

describe('monitor snapshots', () => {
  it('hands over the snapshot the previous incarnation left (keyed slots only)', async () => {
    const { m } = await startMonitor({ key: 'host-1/bot' }, (fake) => {
      fake.snapshot = { state: { turn: 4, topic: 'billing' }, version: 3, ttlMs: 60_000 };
    });
    expect(m.restoredSnapshot).toMatchObject({ state: { turn: 4, topic: 'billing' }, version: 3 });
    const restored = m.restore()!;
    restored.turn = 99; // a copy
    expect(m.restore()).toEqual({ turn: 4, topic: 'billing' });
    // its shape named by the caller (the README's example): destructured without a cast
    let { turn, topic } = { turn: 0, topic: '' };
    ({ turn, topic } = m.restore<{ turn: number; topic: string }>() ?? { turn, topic });
    expect([turn, topic]).toEqual([4, 'billing']);

    const unkeyed = await startMonitor({}, (fake) => {
      fake.snapshot = { state: { a: 1 }, version: 1, ttlMs: 60_000 };
    });
    expect(unkeyed.m.restoredSnapshot).toBeNull();
    expect(unkeyed.m.restore()).toBeNull();
  });

  it('answers a checkpoint at the next safe point: the state stored (full, then a patch), acknowledged done', async () => {
    let state: JsonObject = { step: 1, plan: { todo: ['a', 'b'] } };
    const { fake, m } = await startMonitor({ snapshot: () => state, snapshotTtlMs: 120_000 });
    fake.commands.push({ id: 'cmd_1', type: 'checkpoint', reason: 'snapshot_and_restart' });
    await delivered(fake);
    expect(m.checkpointRequested).toBe(true);
    // nothing is taken before the safe point
    expect(snapshotWrites(fake)).toEqual([]);
    expect(allAcks(fake)).toEqual([]);

    expect(await m.safePoint()).toBe(false);
    expect(m.checkpointRequested).toBe(false);
    expect(fake.snapshot).toEqual({ state, version: 1, ttlMs: 120_000 });
    expect(await ackOf(fake, 'cmd_1')).toMatchObject({ outcome: 'done' });

    // the next one sends only what changed (a merge patch)
    state = { step: 2, plan: { todo: ['b'] } };
    fake.commands.push({ id: 'cmd_2', type: 'checkpoint', ttlMs: 3_600_000 });
    await delivered(fake);
    await m.safePoint();
    const writes = snapshotWrites(fake);
    expect(writes.map((w) => w.method)).toEqual(['PUT', 'PATCH']);
    expect(writes[1]?.body).toEqual({ step: 2, plan: { todo: ['b'] } });
    expect(writes[1]?.query.get('ttlMs')).toBe('3600000'); // the command's TTL over the option's
    expect(fake.snapshot?.state).toEqual(state);
    expect(await ackOf(fake, 'cmd_2')).toMatchObject({ outcome: 'done' });
  });

  it('without a provider a checkpoint is unsupported at once; a failed store is acknowledged failed', async () => {
    const plain = await startMonitor();
    plain.fake.commands.push({ id: 'cmd_u', type: 'checkpoint' });
    expect(await ackOf(plain.fake, 'cmd_u')).toMatchObject({
      outcome: 'unsupported',
      message: expect.stringMatching(/snapshot provider/),
    });

    const { fake, m } = await startMonitor({ snapshot: () => ({ big: true }) });
    fake.override = (r, res) => {
      if (!r.path.endsWith('/snapshot')) return false;
      res.writeHead(413, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'payload_too_large', message: 'too large' } }));
      return true;
    };
    fake.commands.push({ id: 'cmd_f', type: 'checkpoint' });
    await delivered(fake);
    expect(await m.safePoint()).toBe(false); // never throws into the agent's loop
    expect(await ackOf(fake, 'cmd_f')).toMatchObject({
      outcome: 'failed',
      message: expect.stringMatching(/too large/),
    });
  });

  it('snapshot(), snapshotPatch() and incremental snapshots falling back to a full one', async () => {
    const { fake, m } = await startMonitor();
    const client = new Client({ url: fake.url, token: fake.agentToken });
    onTestFinished(() => client.close());
    expect(await client.getSnapshot('agt_1')).toBeNull(); // a 404 is "none"
    await expect(m.snapshotPatch({ a: 1 })).rejects.toBeInstanceOf(RouseApiError);
    await m.snapshot({ a: 1, b: { c: 2 } }, { ttlMs: 5000 });
    expect(fake.snapshot).toEqual({ state: { a: 1, b: { c: 2 } }, version: 1, ttlMs: 5000 });
    expect(await client.getSnapshot('agt_1')).toMatchObject({ state: { a: 1, b: { c: 2 } }, version: 1 });
    await m.snapshotPatch({ b: { c: null, d: 3 } });
    expect(fake.snapshot?.state).toEqual({ a: 1, b: { d: 3 } });
    await m.snapshot({ a: 2, b: { d: 3 } }, { incremental: true });
    expect(snapshotWrites(fake).at(-1)).toMatchObject({ method: 'PATCH', body: { a: 2 } });
    // a state with a null member cannot be a merge patch: sent whole
    await m.snapshot({ a: null }, { incremental: true });
    expect(snapshotWrites(fake).at(-1)).toMatchObject({ method: 'PUT', body: { state: { a: null } } });
    // the coordinator forgot it (expired): the patch is refused and the state sent whole
    fake.snapshot = null;
    await m.snapshot({ a: 3 }, { incremental: true });
    expect(
      snapshotWrites(fake)
        .slice(-2)
        .map((w) => w.method),
    ).toEqual(['PATCH', 'PUT']);
    expect(fake.snapshot).toMatchObject({ state: { a: 3 } });
    await expect(m.snapshot([] as never)).rejects.toMatchObject({ code: 'invalid_option' });
    // a state JSON cannot carry is refused naming the call, before anything is sent
    const writes = snapshotWrites(fake).length;
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(m.snapshot({ cyclic } as never)).rejects.toThrow(
      /^snapshot\(state\) must be JSON \(Converting circular/,
    );
    await expect(m.snapshot({ n: 10n } as never, { incremental: true })).rejects.toMatchObject({
      code: 'invalid_option',
      message: expect.stringMatching(/^snapshot\(state\) must be JSON .*BigInt/),
    });
    await expect(m.snapshotPatch({ n: 10n } as never)).rejects.toThrow(
      /^snapshotPatch\(patch\) must be JSON/,
    );
    expect(snapshotWrites(fake)).toHaveLength(writes);
  });
});

describe('worker snapshots', () => {
  it('takes a requested snapshot at a handler’s safe point, or at once when idle', async () => {
    let state: JsonObject = { handled: 0 };
    const atSafePoint = deferred();
    const release = deferred();
    const { fake, worker } = await startHarness({
      heartbeatIntervalMs: 20,
      snapshot: () => state,
      handler: async (_task, ctx) => {
        await atSafePoint.promise;
        await ctx.safePoint();
        await release.promise;
        return null;
      },
    });
    fake.addTask();
    await within(
      5000,
      fake.waitUntil(() => fake.agentBeats().some((b) => (b.tasks ?? []).length > 0)),
      'running',
    );
    fake.commands.push({ id: 'cmd_w', type: 'checkpoint' });
    await delivered(fake);
    expect(snapshotWrites(fake)).toEqual([]); // busy: waits for the handler's safe point
    state = { handled: 1 };
    atSafePoint.resolve();
    expect(await ackOf(fake, 'cmd_w')).toMatchObject({ outcome: 'done' });
    expect(fake.snapshot?.state).toEqual({ handled: 1 });
    release.resolve();
    await within(
      5000,
      fake.waitUntil(() => fake.completed.size === 1),
      'the task completed',
    );

    state = { handled: 2 };
    fake.commands.push({ id: 'cmd_idle', type: 'checkpoint' });
    expect(await ackOf(fake, 'cmd_idle')).toMatchObject({ outcome: 'done' });
    expect(fake.snapshot?.state).toEqual({ handled: 2 });
    expect(worker.restoredSnapshot).toBeNull();
  });
});
