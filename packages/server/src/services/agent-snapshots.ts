/**
 * Agent snapshots (docs/design.md "Snapshots"; `PUT`/`PATCH`/`GET /v1/agents/{id}/snapshot`): an
 * agent's own state, kept for its next incarnation. A full snapshot becomes the stored base — in its
 * row, or in the blob store when it is larger than `snapshotInlineMaxBytes`; a patch (RFC 7386) is
 * appended as a delta, and when the deltas are too many (`snapshotMaxDeltas`) or too large
 * (`snapshotMaxDeltasBytes`) the base, the deltas and the new patch are composed into a new base in one
 * conditional write (compaction). Reads compose base and deltas. Expired snapshots are deleted, with
 * their blobs, every `snapshotSweepIntervalMs`.
 */
import { randomBytes } from 'node:crypto';
import {
  type AgentSnapshot,
  composeMergePatches,
  DEFAULT_SNAPSHOT_TTL_MS,
  type JsonObject,
  type PutSnapshotRequest,
  type ResultRef,
  type SnapshotWritten,
} from '@rouse/protocol';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import { NotFoundError, RouseError } from '../core/errors.js';
import type { SnapshotBaseWritten, SnapshotHead, Store, StoredSnapshot } from '../store/store.js';
import type { Caller } from './auth.js';
import { requireActsAs } from './auth.js';
import type { BlobStore } from './blob-store.js';
import type { ResolvedCoordinatorOptions } from './coordinator-options.js';
import { every } from './periodic.js';

/** How many times a patch tries again when its compaction lost a race with another write. */
const COMPACTION_TRIES = 5;
/** Deleted per statement by the sweep (it repeats until fewer are left). */
const SWEEP_BATCH = 1000;

export interface AgentSnapshots {
  /** `PUT`: store a full snapshot (agent token of `agentId`, or admin). */
  put(caller: Caller, agentId: string, req: PutSnapshotRequest): Promise<SnapshotWritten>;
  /**
   * `PATCH`: apply a merge patch to the live snapshot; `ttlMs` renews it with a new TTL (else its own).
   * `404 not_found` (details `{ kind: 'snapshot', id }`) when there is no live snapshot to patch.
   */
  patch(caller: Caller, agentId: string, patch: JsonObject, ttlMs?: number): Promise<SnapshotWritten>;
  /** `GET`: the composed state (admin, read-only, or the agent itself); `404` when none is live. */
  get(caller: Caller, agentId: string): Promise<AgentSnapshot>;
  /** The agent's live snapshot, composed, or null — no caller check (registration, the watchdog). */
  latest(agentId: string): Promise<AgentSnapshot | null>;
}

export interface AgentSnapshotDeps {
  store: Store;
  blobs: BlobStore;
  clock: Clock;
  logger: Logger;
  options: Pick<
    ResolvedCoordinatorOptions,
    'snapshotMaxBytes' | 'snapshotInlineMaxBytes' | 'snapshotMaxDeltas' | 'snapshotMaxDeltasBytes'
  >;
}

export function createAgentSnapshots(ctx: AgentSnapshotDeps): AgentSnapshots {
  const { store, options: o } = ctx;

  /** The write's agent must exist (an agent token's always does). */
  async function requireWriter(caller: Caller, agentId: string): Promise<void> {
    requireActsAs(caller, agentId, 'write its snapshot');
    if (caller.kind === 'admin' && (await store.getAgent(agentId)) === null) {
      throw new NotFoundError('agent', agentId);
    }
  }

  function tooLarge(agentId: string, bytes: number): RouseError {
    return new RouseError(
      'payload_too_large',
      `the snapshot of agent ${agentId} would be ${bytes} bytes as JSON, over the ${o.snapshotMaxBytes}-byte limit; keep less state in it`,
      { agentId, bytes, limitBytes: o.snapshotMaxBytes },
    );
  }

  /** The base to write for `state`: inline, or uploaded to the blob store when large. */
  async function baseFor(
    agentId: string,
    state: JsonObject,
  ): Promise<{ base: JsonObject | null; baseRef: ResultRef | null; baseBytes: number }> {
    const text = JSON.stringify(state);
    const baseBytes = Buffer.byteLength(text);
    if (baseBytes > o.snapshotMaxBytes) throw tooLarge(agentId, baseBytes);
    if (baseBytes <= o.snapshotInlineMaxBytes) return { base: state, baseRef: null, baseBytes };
    // One key per write (`<agentId>/<time>-<random>`): a write never overwrites a blob a row refers to.
    const key = `${agentId}/${ctx.clock.now()}-${randomBytes(8).toString('hex')}`;
    const baseRef = await ctx.blobs.put(key, 'application/json', Buffer.from(text));
    return { base: null, baseRef, baseBytes };
  }

  /** Forget a blob nothing refers to any more (the blob sweep catches what fails here). */
  async function dropBlob(ref: ResultRef | null): Promise<void> {
    if (ref === null) return;
    await ctx.blobs.remove(ref.key).catch((err: unknown) => {
      ctx.logger.warn({ err, key: ref.key }, 'could not delete a snapshot blob; the blob sweep will');
    });
  }

  /** Write a new base (`write` is the store call), dropping the blob it replaced — or its own, if refused. */
  async function writeBase(
    agentId: string,
    state: JsonObject,
    write: (base: Awaited<ReturnType<typeof baseFor>>) => Promise<SnapshotBaseWritten | null>,
  ): Promise<SnapshotHead | null> {
    const base = await baseFor(agentId, state);
    let written: SnapshotBaseWritten | null;
    try {
      written = await write(base);
    } catch (err) {
      await dropBlob(base.baseRef);
      throw err;
    }
    if (written === null) {
      await dropBlob(base.baseRef);
      return null;
    }
    await dropBlob(written.replacedRef);
    return written.head;
  }

  async function baseState(stored: StoredSnapshot): Promise<JsonObject> {
    if (stored.base !== null) return stored.base;
    if (stored.baseRef === null) return {};
    const chunks: Buffer[] = [];
    for await (const chunk of await ctx.blobs.open(stored.baseRef)) {
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
    }
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as JsonObject;
  }

  async function compose(stored: StoredSnapshot, extra: JsonObject[] = []): Promise<JsonObject> {
    return composeMergePatches(await baseState(stored), [...stored.deltas, ...extra]) as JsonObject;
  }

  async function latest(agentId: string): Promise<AgentSnapshot | null> {
    const stored = await store.getSnapshot(agentId);
    if (stored === null) return null;
    const state = await compose(stored);
    return {
      agentId,
      state,
      version: stored.version,
      deltas: stored.deltas.length,
      sizeBytes: stored.deltas.length === 0 ? stored.baseBytes : Buffer.byteLength(JSON.stringify(state)),
      updatedAt: stored.updatedAt,
      expiresAt: stored.expiresAt,
      ttlMs: stored.ttlMs,
    };
  }

  return {
    async put(caller, agentId, req) {
      await requireWriter(caller, agentId);
      const ttlMs = req.ttlMs ?? DEFAULT_SNAPSHOT_TTL_MS;
      const head = await writeBase(agentId, req.state, (base) =>
        store.putSnapshot({ agentId, ...base, ttlMs }),
      );
      // putSnapshot always writes
      return written(head!);
    },

    async patch(caller, agentId, patch, ttlMs) {
      await requireWriter(caller, agentId);
      const patchBytes = Buffer.byteLength(JSON.stringify(patch));
      for (let tries = 0; tries < COMPACTION_TRIES; tries++) {
        const appended = await store.appendSnapshotDelta({
          agentId,
          patch,
          patchBytes,
          ttlMs: ttlMs ?? null,
          maxDeltas: o.snapshotMaxDeltas,
          maxDeltasBytes: o.snapshotMaxDeltasBytes,
        });
        if (appended.outcome === 'appended') return written(appended.head);
        if (appended.outcome === 'missing') throw noSnapshot(agentId);
        // Full: compose everything with this patch into a new base, if nothing else wrote meanwhile.
        const stored = await store.getSnapshot(agentId);
        if (stored === null) throw noSnapshot(agentId);
        const state = await compose(stored, [patch]);
        const head = await writeBase(agentId, state, (base) =>
          store.compactSnapshot({
            agentId,
            ...base,
            ttlMs: ttlMs ?? stored.ttlMs,
            expectedVersion: stored.version,
          }),
        );
        if (head !== null) {
          ctx.logger.debug({ agentId, version: head.version, bytes: head.baseBytes }, 'compacted a snapshot');
          return written(head);
        }
      }
      throw new RouseError(
        'conflict',
        `the snapshot of agent ${agentId} kept changing while this patch was compacted into it; send the patch again`,
        { agentId },
      );
    },

    async get(caller, agentId) {
      if (caller.kind === 'enrollment' || (caller.kind === 'agent' && caller.agentId !== agentId)) {
        throw new RouseError(
          'forbidden',
          caller.kind === 'agent'
            ? `agent ${caller.agentId} may not read the snapshot of agent ${agentId}; an agent reads only its own`
            : 'the enrollment token may not read snapshots; use the admin or read-only token',
          { caller: caller.kind },
        );
      }
      const found = await latest(agentId);
      if (found === null) throw noSnapshot(agentId);
      return found;
    },

    latest,
  };
}

function written(head: SnapshotHead): SnapshotWritten {
  return {
    agentId: head.agentId,
    version: head.version,
    deltas: head.deltaCount,
    updatedAt: head.updatedAt,
    expiresAt: head.expiresAt,
    ttlMs: head.ttlMs,
  };
}

function noSnapshot(agentId: string): RouseError {
  return new RouseError(
    'not_found',
    `agent ${agentId} has no live snapshot (none was stored, or it expired); PUT a full snapshot first`,
    { kind: 'snapshot', id: agentId },
  );
}

export interface SnapshotSweeper {
  start(): void;
  stop(): void;
  /** Delete every expired snapshot and its blob now (also what the timer runs); returns how many. */
  sweep(): Promise<number>;
}

/** Every `intervalMs`, delete the snapshots whose time is up, and their blobs (any coordinator may). */
export function createSnapshotSweeper(deps: {
  store: Pick<Store, 'deleteExpiredSnapshots'>;
  blobs: BlobStore;
  clock: Clock;
  logger: Logger;
  intervalMs: number;
}): SnapshotSweeper {
  const { store, blobs, clock, logger, intervalMs } = deps;

  const sweep = async (): Promise<number> => {
    let total = 0;
    for (;;) {
      const { deleted, blobRefs } = await store.deleteExpiredSnapshots({ limit: SWEEP_BATCH });
      total += deleted;
      for (const ref of blobRefs) {
        await blobs.remove(ref.key).catch((err: unknown) => {
          logger.warn(
            { err, key: ref.key },
            'could not delete an expired snapshot blob; the blob sweep will',
          );
        });
      }
      if (deleted < SWEEP_BATCH) break;
    }
    if (total > 0) logger.info({ deleted: total }, 'deleted expired agent snapshots');
    return total;
  };
  const loop = every(clock, intervalMs, sweep, (err) =>
    logger.warn({ err }, 'snapshot sweep failed; trying again next time'),
  );
  return { start: () => loop.start(), stop: () => loop.stop(), sweep };
}
