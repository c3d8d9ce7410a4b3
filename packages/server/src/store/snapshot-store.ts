/**
 * The agent-snapshots part of the Store contract (docs/design.md "Snapshots"): one snapshot per agent
 * slot, kept as a **base** (a full JSON object, inline or — when large — in the blob store, named by a
 * `ResultRef`) plus the **deltas** written since (JSON merge patches, RFC 7386, applied in order).
 * Composing them (and reading a blob) is the caller's business (`services/agent-snapshots.ts`); the
 * store keeps the rows, their version and their time to live. Part of `Store` (`store.ts`).
 *
 * - Every write (full or delta) adds 1 to `version` and renews `expiresAt = now + ttlMs`.
 * - A snapshot whose `expiresAt` has passed is gone for every read and write (a delta on it is refused)
 *   even before the sweep deletes its row.
 */
import type { JsonObject, ResultRef } from '@rouse/protocol';

/** A snapshot as stored: its base and the deltas on it. */
export interface StoredSnapshot {
  agentId: string;
  version: number;
  /** The base, when it is kept inline; null when it is in the blob store (`baseRef`). */
  base: JsonObject | null;
  /** The blob holding the base (its JSON text), when it is large; else null. */
  baseRef: ResultRef | null;
  /** The base's size as JSON (UTF-8 bytes). */
  baseBytes: number;
  /** The merge patches written since the base, oldest first. */
  deltas: JsonObject[];
  /** Their total size as JSON. */
  deltasBytes: number;
  ttlMs: number;
  updatedAt: number;
  expiresAt: number;
}

/** What a write tells about the snapshot it left (without its contents). */
export interface SnapshotHead {
  agentId: string;
  version: number;
  baseRef: ResultRef | null;
  baseBytes: number;
  deltaCount: number;
  deltasBytes: number;
  ttlMs: number;
  updatedAt: number;
  expiresAt: number;
}

/** A new base: inline (`base`) or in a blob (`baseRef`) — exactly one of them. */
export interface SnapshotBaseInput {
  agentId: string;
  base: JsonObject | null;
  baseRef: ResultRef | null;
  baseBytes: number;
  ttlMs: number;
}

export interface SnapshotBaseWritten {
  head: SnapshotHead;
  /** The blob of the base this write replaced (the caller deletes it), or null. */
  replacedRef: ResultRef | null;
}

export interface AppendSnapshotDeltaInput {
  agentId: string;
  patch: JsonObject;
  /** `patch`'s size as JSON. */
  patchBytes: number;
  /** The TTL to renew with; null keeps the snapshot's own. */
  ttlMs: number | null;
  /** Refuse (`full`) when the snapshot already holds this many deltas. */
  maxDeltas: number;
  /** Refuse (`full`) when the deltas with this one would pass this many bytes. */
  maxDeltasBytes: number;
}

/**
 * `appended`: the delta is stored; `full`: the live snapshot holds too many deltas to take this one —
 * compact it (`compactSnapshot`) with the delta folded in; `missing`: no live snapshot to patch.
 */
export type AppendSnapshotDeltaResult =
  | { outcome: 'appended'; head: SnapshotHead }
  | { outcome: 'full'; head: SnapshotHead }
  | { outcome: 'missing' };

export interface SnapshotStore {
  /**
   * Store a full snapshot: the new base replaces the old one and drops its deltas (version + 1,
   * expiry renewed), whether or not there was a snapshot, live or expired.
   */
  putSnapshot(input: SnapshotBaseInput): Promise<SnapshotBaseWritten>;
  /** Append a merge patch to the live snapshot (version + 1, expiry renewed); see the result type. */
  appendSnapshotDelta(input: AppendSnapshotDeltaInput): Promise<AppendSnapshotDeltaResult>;
  /**
   * Compaction: replace base and deltas by one new base, in one conditional write — only while the
   * snapshot is live and still at `expectedVersion` (else null: another write came first; read again).
   * The new base is a new state (the caller folded a new delta in): version + 1, expiry renewed.
   */
  compactSnapshot(
    input: SnapshotBaseInput & { expectedVersion: number },
  ): Promise<SnapshotBaseWritten | null>;
  /** The agent's live snapshot, or null (none, or expired). */
  getSnapshot(agentId: string): Promise<StoredSnapshot | null>;
  /**
   * Delete up to `limit` snapshots whose time is up; returns how many, and the blobs of their bases
   * (the caller deletes them).
   */
  deleteExpiredSnapshots(input: { limit: number }): Promise<{ deleted: number; blobRefs: ResultRef[] }>;
}
