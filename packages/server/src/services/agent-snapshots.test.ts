/**
 * Agent snapshots in the coordinator, on SQLite (blobs as files) and PostgreSQL (blobs in the
 * database), with a manual clock: patches compose and are compacted, large bases go to the blob store
 * and their blobs are deleted when replaced or expired (and kept by the blob sweep while referred to),
 * the next incarnation of a keyed slot receives the snapshot, and who may write and read it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyMergePatch, type JsonObject } from '@rouse/protocol';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { freshSchema } from '../../../../test/harness/postgres.js';
import { ManualClock } from '../core/clock.js';
import { createPostgresStore } from '../store/postgres/postgres-store.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store } from '../store/store.js';
import { ADMIN, createFixture, ENROLLMENT, READONLY, TOKENS } from '../test-support/coordinator-fixture.js';
import { type BlobStore, createFileBlobStore } from './blob-store.js';
import type { Caller } from './coordinator.js';
import type { CoordinatorOptions } from './coordinator-options.js';
import { type CoordinatorService, createCoordinator } from './create-coordinator.js';

const HOUR = 3_600_000;

interface Setup {
  clock: ManualClock;
  store: Store;
  /** Reads the same blobs as the coordinator's own blob store. */
  blobs: BlobStore;
  coordinator: CoordinatorService;
  close(): Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function setup(
  backend: 'sqlite' | 'postgres',
  options: Partial<CoordinatorOptions> = {},
): Promise<Setup> {
  // The file blob store ages files by their mtime: the manual clock starts at the real time.
  const clock = new ManualClock(Date.now());
  const dir = await mkdtemp(join(tmpdir(), 'rouse-snapshots-'));
  let store: Store;
  let drop = async () => {};
  if (backend === 'sqlite') store = createSqliteStore({ path: ':memory:', clock });
  else {
    const schema = await freshSchema('snapshots');
    store = await createPostgresStore({
      connectionString: schema.connectionString,
      schema: schema.schema,
      clock,
    });
    drop = schema.drop;
  }
  const coordinator = createCoordinator({
    store,
    clock,
    logger: pino({ level: 'silent' }),
    blobDir: join(dir, 'blobs'),
    tokens: TOKENS,
    ...options,
  });
  await coordinator.start();
  const s: Setup = {
    clock,
    store,
    blobs:
      store.createBlobStore?.({ maxBytes: 1 << 30 }) ??
      createFileBlobStore({ dir: join(dir, 'blobs'), maxBytes: 1 << 30 }),
    coordinator,
    async close() {
      await coordinator.stop();
      await store.close();
      await drop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  cleanups.push(() => s.close());
  return s;
}

async function register(c: CoordinatorService, key?: string): Promise<Caller & { kind: 'agent' }> {
  const r = await c.registerAgent(ENROLLMENT, { agentType: 'bot', ...(key === undefined ? {} : { key }) });
  return { kind: 'agent', agentId: r.agent.id, incarnation: r.incarnation, agentType: 'bot' };
}

/** The blob of the agent's stored base, read back whole (rejects when it is gone). */
async function readBlob(s: Setup, key: string): Promise<string> {
  const stream = await s.blobs.open({ key, sizeBytes: 0, contentType: 'application/json', sha256: '' });
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

describe.each(['sqlite', 'postgres'] as const)('agent snapshots on %s', (backend) => {
  it('patches compose to the same state as full snapshots, compacted when too many or too large', async () => {
    const s = await setup(backend, {
      snapshotMaxDeltas: 3,
      snapshotMaxDeltasBytes: 4096,
      snapshotInlineMaxBytes: 1024,
    });
    const agent = await register(s.coordinator);
    let model: JsonObject = { step: 0, plan: { todo: ['a', 'b'] } };
    await s.coordinator.putSnapshot(agent, agent.agentId, { state: model });
    const versions: number[] = [];
    for (let step = 1; step <= 8; step++) {
      const patch: JsonObject = { step, plan: { [`s${step}`]: step % 2 === 0 ? null : [step] } };
      if (step === 4) patch.plan = null;
      model = applyMergePatch(model, patch) as JsonObject;
      const written = await s.coordinator.patchSnapshot(agent, agent.agentId, patch);
      versions.push(written.version);
      expect(written.deltas).toBeLessThanOrEqual(3);
      const got = await s.coordinator.getSnapshot(agent, agent.agentId);
      expect(got.state).toEqual(model);
      expect(got.deltas).toBe(written.deltas);
    }
    expect(versions).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    // 8 patches with room for 3: compacted twice (the 4th and 8th patch found 3 deltas)
    expect((await s.store.getSnapshot(agent.agentId))?.deltas).toHaveLength(0);

    // a patch past the deltas' size bound is compacted at once — into a blob, the state being large now
    const big = 'x'.repeat(5000);
    model = applyMergePatch(model, { big }) as JsonObject;
    const written = await s.coordinator.patchSnapshot(agent, agent.agentId, { big });
    expect(written).toMatchObject({ version: 10, deltas: 0 });
    const stored = await s.store.getSnapshot(agent.agentId);
    expect(stored?.base).toBeNull();
    expect(stored?.baseRef?.key).toMatch(new RegExp(`^${agent.agentId}/`));
    expect(JSON.parse(await readBlob(s, stored!.baseRef!.key))).toEqual(model);
    await s.coordinator.patchSnapshot(agent, agent.agentId, { small: 1 });
    expect((await s.coordinator.getSnapshot(READONLY, agent.agentId)).state).toEqual({ ...model, small: 1 });
  });

  it('keeps a large base as a blob, deletes it when replaced or expired, and the blob sweep leaves it alone meanwhile', async () => {
    const s = await setup(backend, { snapshotInlineMaxBytes: 1024 });
    const agent = await register(s.coordinator);
    const large = { notes: 'n'.repeat(3000), list: [1, 2, 3] };
    await s.coordinator.putSnapshot(agent, agent.agentId, { state: large, ttlMs: 48 * HOUR });
    const first = (await s.store.getSnapshot(agent.agentId))!.baseRef!;
    expect(first.sizeBytes).toBe(Buffer.byteLength(JSON.stringify(large)));
    expect(JSON.parse(await readBlob(s, first.key))).toEqual(large);
    const got = await s.coordinator.getSnapshot(agent, agent.agentId);
    expect(got).toMatchObject({ state: large, sizeBytes: first.sizeBytes, deltas: 0, version: 1 });

    // a new full snapshot (small) replaces the blob: it is deleted
    await s.coordinator.putSnapshot(agent, agent.agentId, { state: { small: true }, ttlMs: 48 * HOUR });
    await expect(readBlob(s, first.key)).rejects.toMatchObject({ code: 'not_found' });

    // the blob sweep keeps a blob a live snapshot refers to, however old
    await s.coordinator.putSnapshot(agent, agent.agentId, { state: large, ttlMs: 48 * HOUR });
    const second = (await s.store.getSnapshot(agent.agentId))!.baseRef!;
    s.clock.advance(25 * HOUR);
    await s.coordinator.sweepBlobsNow();
    expect(JSON.parse(await readBlob(s, second.key))).toEqual(large);

    // once expired, the snapshot sweep deletes the row and its blob
    s.clock.advance(23 * HOUR);
    await expect(s.coordinator.getSnapshot(agent, agent.agentId)).rejects.toMatchObject({
      code: 'not_found',
    });
    expect(await s.coordinator.sweepSnapshotsNow()).toBe(1);
    await expect(readBlob(s, second.key)).rejects.toMatchObject({ code: 'not_found' });
    expect(await s.coordinator.sweepSnapshotsNow()).toBe(0);
  });

  it('the next incarnation of a keyed slot receives the snapshot at registration, until it expires', async () => {
    const s = await setup(backend);
    const first = await s.coordinator.registerAgent(ENROLLMENT, { agentType: 'bot', key: 'host-1/bot-1' });
    expect(first.snapshot).toBeNull();
    const caller: Caller = { kind: 'agent', agentId: first.agent.id, incarnation: 1, agentType: 'bot' };
    await s.coordinator.putSnapshot(caller, first.agent.id, { state: { turn: 7 }, ttlMs: HOUR });
    await s.coordinator.patchSnapshot(caller, first.agent.id, { turn: 8, topic: 'billing' });

    const second = await s.coordinator.registerAgent(ENROLLMENT, { agentType: 'bot', key: 'host-1/bot-1' });
    expect(second.agent.id).toBe(first.agent.id);
    expect(second.incarnation).toBe(2);
    expect(second.snapshot).toMatchObject({
      agentId: first.agent.id,
      state: { turn: 8, topic: 'billing' },
      version: 2,
      deltas: 1,
      ttlMs: HOUR,
    });
    // the old incarnation's token no longer writes it
    const old = await s.coordinator.authenticate(first.token);
    expect(old).toBeNull();
    // an agent without a key is a new slot: nothing to receive
    expect((await s.coordinator.registerAgent(ENROLLMENT, { agentType: 'bot' })).snapshot).toBeNull();

    s.clock.advance(HOUR);
    const third = await s.coordinator.registerAgent(ENROLLMENT, { agentType: 'bot', key: 'host-1/bot-1' });
    expect(third.snapshot).toBeNull();
  });

  it('an agent writes and reads only its own; the admin writes any existing agent, the read-only token reads', async () => {
    const s = await setup(backend, { snapshotMaxBytes: 4096 });
    const a = await register(s.coordinator);
    const b = await register(s.coordinator);
    await expect(s.coordinator.patchSnapshot(a, a.agentId, { x: 1 })).rejects.toMatchObject({
      code: 'not_found',
      details: { kind: 'snapshot', id: a.agentId },
    });
    await s.coordinator.putSnapshot(a, a.agentId, { state: { mine: true } });
    await expect(s.coordinator.putSnapshot(b, a.agentId, { state: {} })).rejects.toMatchObject({
      code: 'forbidden',
    });
    await expect(s.coordinator.patchSnapshot(b, a.agentId, { x: 1 })).rejects.toMatchObject({
      code: 'forbidden',
    });
    await expect(s.coordinator.getSnapshot(b, a.agentId)).rejects.toMatchObject({ code: 'forbidden' });
    await expect(s.coordinator.getSnapshot(ENROLLMENT, a.agentId)).rejects.toMatchObject({
      code: 'forbidden',
    });
    await expect(s.coordinator.putSnapshot(READONLY, a.agentId, { state: {} })).rejects.toMatchObject({
      code: 'forbidden',
    });
    expect((await s.coordinator.getSnapshot(READONLY, a.agentId)).state).toEqual({ mine: true });
    await s.coordinator.patchSnapshot(ADMIN, a.agentId, { admin: 1 }, 2 * HOUR);
    expect(await s.coordinator.getSnapshot(a, a.agentId)).toMatchObject({
      state: { mine: true, admin: 1 },
      ttlMs: 2 * HOUR,
    });
    await expect(s.coordinator.putSnapshot(ADMIN, 'agt_missing', { state: {} })).rejects.toMatchObject({
      code: 'not_found',
      details: { kind: 'agent' },
    });
    await expect(s.coordinator.getSnapshot(b, b.agentId)).rejects.toMatchObject({ code: 'not_found' });
    // over the size limit: refused, nothing changes
    await expect(
      s.coordinator.putSnapshot(a, a.agentId, { state: { big: 'x'.repeat(5000) } }),
    ).rejects.toMatchObject({ code: 'payload_too_large', details: { limitBytes: 4096 } });
    expect((await s.coordinator.getSnapshot(a, a.agentId)).version).toBe(2);
  });
});

describe('the snapshot sweep', () => {
  it('runs every snapshotSweepIntervalMs', async () => {
    const f = await createFixture({ snapshotSweepIntervalMs: 60_000 });
    cleanups.push(() => f.close());
    const agent = await f.register();
    await f.coordinator.putSnapshot(agent.caller, agent.agentId, { state: { a: 1 }, ttlMs: 1000 });
    await f.coordinator.putSnapshot(ADMIN, (await f.register()).agentId, { state: { b: 1 }, ttlMs: HOUR });
    await f.advance(60_000);
    // the timer deleted the expired one already; the live one stays
    expect(await f.store.deleteExpiredSnapshots({ limit: 10 })).toEqual({ deleted: 0, blobRefs: [] });
    f.clock.advance(HOUR);
    expect(await f.store.deleteExpiredSnapshots({ limit: 10 })).toMatchObject({ deleted: 1 });
  });
});
