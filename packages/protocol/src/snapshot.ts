/**
 * Agent snapshots (docs/design.md "Snapshots", docs/protocol.md "Snapshots"): an agent's own state,
 * taken at a safe point and kept for its next incarnation. A snapshot is a full JSON object, or a
 * JSON merge patch (RFC 7386, `merge-patch.ts`) on the previous one; the coordinator keeps a base plus
 * the patches since and compacts them. It lives `ttlMs` after its last write. `POST /v1/agents`
 * returns the slot's latest live snapshot as `snapshot`.
 */
import type { z } from 'zod';
import type * as schemas from './schemas/snapshots.js';
import type { JsonObject } from './task.js';

/** How long a snapshot is kept after its last write when the writer does not say. */
export const DEFAULT_SNAPSHOT_TTL_MS = 24 * 60 * 60 * 1000;

/** An agent's current snapshot, as `GET /v1/agents/{id}/snapshot` and registration return it. */
export interface AgentSnapshot {
  agentId: string;
  /** The state: the last full snapshot with every patch since applied. */
  state: JsonObject;
  /** Grows by one with every write (full or patch); a compaction keeps it. */
  version: number;
  /** Patches on the stored base not compacted yet (how the state is kept, for the curious). */
  deltas: number;
  /** Size of `state` as JSON (UTF-8 bytes). */
  sizeBytes: number;
  /** When the last write (full or patch) was stored. */
  updatedAt: number;
  /** The snapshot is forgotten then unless written again. */
  expiresAt: number;
  /** The time to live the writes renew it with. */
  ttlMs: number;
}

export type PutSnapshotRequest = z.input<typeof schemas.putSnapshot>;
export type PatchSnapshotQuery = z.input<typeof schemas.patchSnapshotQuery>;

/** What a write (`PUT`, `PATCH`) answers with: the snapshot it left, without its state. */
export type SnapshotWritten = Omit<AgentSnapshot, 'state' | 'sizeBytes'>;

/** `GET /v1/agents/{id}/snapshot`. */
export interface SnapshotResponse {
  snapshot: AgentSnapshot;
}

/** `PUT` and `PATCH /v1/agents/{id}/snapshot`. */
export interface SnapshotWrittenResponse {
  snapshot: SnapshotWritten;
}
