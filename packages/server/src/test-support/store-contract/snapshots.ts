/**
 * Contract: agent snapshots — a full write replaces base and deltas, deltas append only to a live
 * snapshot and only while it has room, compaction is one conditional write on the version, a large
 * base is a blob reference, snapshots expire after their TTL (renewed by every write) and are deleted
 * with their blobs' references handed back.
 */
import type { ResultRef } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import type { AppendSnapshotDeltaInput, SnapshotBaseInput } from '../../store/store.js';
import { type Harness, T0, uniqueId } from './harness.js';

const MINUTE = 60_000;
const bytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v));

function full(agentId: string, state: Record<string, unknown>, ttlMs = 10 * MINUTE): SnapshotBaseInput {
  return { agentId, base: state as never, baseRef: null, baseBytes: bytes(state), ttlMs };
}

function delta(
  agentId: string,
  patch: Record<string, unknown>,
  overrides: Partial<AppendSnapshotDeltaInput> = {},
): AppendSnapshotDeltaInput {
  return {
    agentId,
    patch: patch as never,
    patchBytes: bytes(patch),
    ttlMs: null,
    maxDeltas: 8,
    maxDeltasBytes: 4096,
    ...overrides,
  };
}

function blobRef(agentId: string, n: number): ResultRef {
  return {
    key: `${agentId}/${n}-abc`,
    sizeBytes: 300_000,
    contentType: 'application/json',
    sha256: 'f'.repeat(64),
  };
}

export function snapshotsContract(h: () => Harness): void {
  describe('agent snapshots', () => {
    it('a full snapshot, then deltas on it in order; a new full snapshot drops the deltas', async () => {
      const { store, clock } = h();
      const agentId = uniqueId('agt');
      expect(await store.getSnapshot(agentId)).toBeNull();
      const first = await store.putSnapshot(full(agentId, { step: 1, plan: { a: 1 } }));
      expect(first).toEqual({
        head: {
          agentId,
          version: 1,
          baseRef: null,
          baseBytes: bytes({ step: 1, plan: { a: 1 } }),
          deltaCount: 0,
          deltasBytes: 0,
          ttlMs: 10 * MINUTE,
          updatedAt: T0,
          expiresAt: T0 + 10 * MINUTE,
        },
        replacedRef: null,
      });
      clock.advance(1000);
      const appended = await store.appendSnapshotDelta(delta(agentId, { step: 2 }));
      expect(appended).toMatchObject({
        outcome: 'appended',
        head: {
          version: 2,
          deltaCount: 1,
          deltasBytes: bytes({ step: 2 }),
          expiresAt: T0 + 1000 + 10 * MINUTE,
        },
      });
      clock.advance(1000);
      await store.appendSnapshotDelta(delta(agentId, { plan: { a: null, b: [1, 'x'] }, note: 'é\u0000' }));
      expect(await store.getSnapshot(agentId)).toEqual({
        agentId,
        version: 3,
        base: { step: 1, plan: { a: 1 } },
        baseRef: null,
        baseBytes: bytes({ step: 1, plan: { a: 1 } }),
        deltas: [{ step: 2 }, { plan: { a: null, b: [1, 'x'] }, note: 'é\u0000' }],
        deltasBytes: bytes({ step: 2 }) + bytes({ plan: { a: null, b: [1, 'x'] }, note: 'é\u0000' }),
        ttlMs: 10 * MINUTE,
        updatedAt: T0 + 2000,
        expiresAt: T0 + 2000 + 10 * MINUTE,
      });
      // a full snapshot replaces base and deltas, with its own TTL
      const put = await store.putSnapshot(full(agentId, { step: 9 }, MINUTE));
      expect(put.head).toMatchObject({ version: 4, deltaCount: 0, deltasBytes: 0, ttlMs: MINUTE });
      expect(await store.getSnapshot(agentId)).toMatchObject({ version: 4, base: { step: 9 }, deltas: [] });
      // snapshots are per agent
      expect(await store.getSnapshot(uniqueId('agt'))).toBeNull();
    });

    it('a delta needs a live snapshot, and a new TTL given with it is kept', async () => {
      const { store, clock } = h();
      const agentId = uniqueId('agt');
      expect(await store.appendSnapshotDelta(delta(agentId, { a: 1 }))).toEqual({ outcome: 'missing' });
      expect(await store.getSnapshot(agentId)).toBeNull();
      await store.putSnapshot(full(agentId, { a: 0 }, MINUTE));
      expect((await store.appendSnapshotDelta(delta(agentId, { a: 1 }, { ttlMs: 5 * MINUTE }))).outcome).toBe(
        'appended',
      );
      clock.advance(4 * MINUTE);
      // the renewed TTL is the new one: still live, and the next delta renews by it again
      expect(await store.appendSnapshotDelta(delta(agentId, { a: 2 }))).toMatchObject({
        outcome: 'appended',
        head: { ttlMs: 5 * MINUTE, expiresAt: T0 + 9 * MINUTE },
      });
      clock.advance(5 * MINUTE);
      expect(await store.getSnapshot(agentId)).toBeNull();
      expect(await store.appendSnapshotDelta(delta(agentId, { a: 3 }))).toEqual({ outcome: 'missing' });
      // a full snapshot over an expired one starts again
      await store.putSnapshot(full(agentId, { b: 1 }));
      expect(await store.getSnapshot(agentId)).toMatchObject({ base: { b: 1 }, deltas: [] });
    });

    it('refuses a delta past the count or size bound (full); compaction is conditional on the version', async () => {
      const { store } = h();
      const agentId = uniqueId('agt');
      await store.putSnapshot(full(agentId, { n: 0 }));
      for (let n = 1; n <= 3; n++) {
        expect((await store.appendSnapshotDelta(delta(agentId, { n }, { maxDeltas: 3 }))).outcome).toBe(
          'appended',
        );
      }
      const refused = await store.appendSnapshotDelta(delta(agentId, { n: 4 }, { maxDeltas: 3 }));
      expect(refused).toMatchObject({ outcome: 'full', head: { version: 4, deltaCount: 3 } });
      expect(
        (await store.appendSnapshotDelta(delta(agentId, { n: 4 }, { maxDeltasBytes: 3 * bytes({ n: 1 }) })))
          .outcome,
      ).toBe('full');
      expect((await store.getSnapshot(agentId))?.deltas).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);

      // a compaction at a version that is no longer current changes nothing
      expect(await store.compactSnapshot({ ...full(agentId, { n: 99 }), expectedVersion: 3 })).toBeNull();
      const compacted = await store.compactSnapshot({ ...full(agentId, { n: 4 }), expectedVersion: 4 });
      expect(compacted).toMatchObject({
        head: { version: 5, deltaCount: 0, deltasBytes: 0 },
        replacedRef: null,
      });
      expect(await store.getSnapshot(agentId)).toMatchObject({ version: 5, base: { n: 4 }, deltas: [] });
      // the same compaction again (a retry) is refused: the version moved on
      expect(await store.compactSnapshot({ ...full(agentId, { n: 4 }), expectedVersion: 4 })).toBeNull();
      expect((await store.appendSnapshotDelta(delta(agentId, { n: 5 }, { maxDeltas: 3 }))).outcome).toBe(
        'appended',
      );
      // no compaction of a snapshot that is not there
      expect(
        await store.compactSnapshot({ ...full(uniqueId('agt'), { n: 1 }), expectedVersion: 1 }),
      ).toBeNull();
    });

    it('of racing deltas and a compaction, the compaction wins only if nothing came between', async () => {
      const { store } = h();
      const agentId = uniqueId('agt');
      await store.putSnapshot(full(agentId, { n: 0 }));
      const results = await Promise.all([
        ...Array.from({ length: 6 }, (_, i) => store.appendSnapshotDelta(delta(agentId, { [`k${i}`]: i }))),
        store.compactSnapshot({ ...full(agentId, { compacted: true }), expectedVersion: 1 }),
      ]);
      const appended = results
        .slice(0, 6)
        .filter((r) => r !== null && 'outcome' in r && r.outcome === 'appended');
      const snap = await store.getSnapshot(agentId);
      expect(snap?.version).toBe(1 + appended.length + (results[6] === null ? 0 : 1));
      if (results[6] !== null) {
        // the compaction ran first (at version 1): the deltas after it are on its base
        expect(snap?.base).toEqual({ compacted: true });
      } else {
        expect(snap?.base).toEqual({ n: 0 });
      }
      expect(snap?.deltas).toHaveLength(appended.length);
    });

    it('keeps a large base as a blob reference and hands back the blob it replaced', async () => {
      const { store } = h();
      const agentId = uniqueId('agt');
      const ref1 = blobRef(agentId, 1);
      const put = await store.putSnapshot({
        agentId,
        base: null,
        baseRef: ref1,
        baseBytes: 300_000,
        ttlMs: MINUTE,
      });
      expect(put).toMatchObject({ head: { baseRef: ref1, baseBytes: 300_000 }, replacedRef: null });
      await store.appendSnapshotDelta(delta(agentId, { a: 1 }));
      expect(await store.getSnapshot(agentId)).toMatchObject({
        base: null,
        baseRef: ref1,
        deltas: [{ a: 1 }],
      });
      const ref2 = blobRef(agentId, 2);
      const compacted = await store.compactSnapshot({
        agentId,
        base: null,
        baseRef: ref2,
        baseBytes: 300_001,
        ttlMs: MINUTE,
        expectedVersion: 2,
      });
      expect(compacted).toMatchObject({ head: { baseRef: ref2 }, replacedRef: ref1 });
      const inline = await store.putSnapshot(full(agentId, { small: true }));
      expect(inline).toMatchObject({ head: { baseRef: null }, replacedRef: ref2 });
      expect(await store.getSnapshot(agentId)).toMatchObject({ base: { small: true }, baseRef: null });
    });

    it('deletes expired snapshots a batch at a time, handing back their blobs', async () => {
      const { store, clock } = h();
      const [a, b, c, kept] = [uniqueId('agt'), uniqueId('agt'), uniqueId('agt'), uniqueId('agt')];
      await store.putSnapshot(full(a, { a: 1 }, MINUTE));
      await store.putSnapshot({
        agentId: b,
        base: null,
        baseRef: blobRef(b, 1),
        baseBytes: 300_000,
        ttlMs: MINUTE,
      });
      await store.putSnapshot(full(c, { c: 1 }, 2 * MINUTE));
      await store.putSnapshot(full(kept, { k: 1 }, 10 * MINUTE));
      clock.advance(MINUTE - 1);
      expect(await store.deleteExpiredSnapshots({ limit: 100 })).toEqual({ deleted: 0, blobRefs: [] });
      clock.advance(MINUTE + 1);
      const first = await store.deleteExpiredSnapshots({ limit: 2 });
      expect(first.deleted).toBe(2);
      expect(first.blobRefs).toEqual([blobRef(b, 1)]);
      expect(await store.deleteExpiredSnapshots({ limit: 100 })).toEqual({ deleted: 1, blobRefs: [] });
      expect(await store.deleteExpiredSnapshots({ limit: 100 })).toEqual({ deleted: 0, blobRefs: [] });
      expect(await store.getSnapshot(kept)).toMatchObject({ base: { k: 1 } });
      // a deleted snapshot can be written afresh
      expect((await store.putSnapshot(full(a, { again: true }))).head.version).toBe(1);
    });
  });
}
