/** Request schemas of the snapshot routes (docs/protocol.md "Snapshots"). */
import { z } from 'zod';
import { durationMs, jsonObject } from './common.js';

/** The shortest TTL a snapshot may have. */
export const MIN_SNAPSHOT_TTL_MS = 1000;

const ttlMs = durationMs(MIN_SNAPSHOT_TTL_MS).describe(
  'Keep the snapshot this long after this write (default: 24 h for a full snapshot; a patch keeps the TTL the snapshot has).',
);

/** `PUT /v1/agents/{id}/snapshot`: a full snapshot. */
export const putSnapshot = z
  .object({
    state: jsonObject.describe('The agent state: a JSON object.'),
    ttlMs: ttlMs.optional(),
  })
  .strict();

/** `PATCH /v1/agents/{id}/snapshot` (the body is the merge patch itself: any JSON object). */
export const snapshotPatch = jsonObject.describe(
  'A JSON merge patch (RFC 7386) on the current snapshot: null removes a member, objects merge, anything else replaces.',
);

export const patchSnapshotQuery = z.object({ ttlMs: z.coerce.number().pipe(ttlMs).optional() }).strict();
