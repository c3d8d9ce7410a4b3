/**
 * The PostgreSQL agent-snapshot statements (see `snapshot-store.ts`). `$1` is the store clock's now or
 * null. The `old` CTEs read the row as it was before the statement (one snapshot for the whole
 * statement), which is how a write names the blob it replaced.
 */
import { CLOCK_CTE } from './sql-fragments.js';

const HEAD_COLUMNS =
  'agent_id, version, base_ref, base_bytes, cardinality(deltas) AS delta_count, deltas_bytes, ttl_ms, updated_at, expires_at';

export const SNAPSHOT_SQL = {
  /** The live snapshot of an agent, whole. Params: $1 now, $2 agent id. */
  selectSnapshot: `
    WITH ${CLOCK_CTE}
    SELECT ${HEAD_COLUMNS}, base, deltas FROM agent_snapshots, clock
    WHERE agent_id = $2 AND expires_at > clock.now`,

  /**
   * A new base, replacing whatever was there (live or expired) and its deltas; returns the new head and
   * the replaced base's blob. Params: $1 now, $2 agent id, $3 base, $4 base ref, $5 base bytes, $6 ttl.
   */
  putSnapshot: `
    WITH ${CLOCK_CTE},
    old AS (SELECT base_ref FROM agent_snapshots WHERE agent_id = $2)
    INSERT INTO agent_snapshots AS s (agent_id, version, base, base_ref, base_bytes, deltas, deltas_bytes, ttl_ms,
                                      updated_at, expires_at)
    SELECT $2, 1, $3, $4::jsonb, $5, '{}', 0, $6, clock.now, clock.now + $6::bigint FROM clock
    ON CONFLICT (agent_id) DO UPDATE SET version = s.version + 1, base = excluded.base,
      base_ref = excluded.base_ref, base_bytes = excluded.base_bytes, deltas = '{}', deltas_bytes = 0,
      ttl_ms = excluded.ttl_ms, updated_at = excluded.updated_at, expires_at = excluded.expires_at
    RETURNING ${HEAD_COLUMNS}, (SELECT base_ref FROM old) AS replaced_ref`,

  /**
   * The compaction: a new base, only while the snapshot is live and at $7. Params: $1 now, $2 agent
   * id, $3 base, $4 base ref, $5 base bytes, $6 ttl, $7 expected version.
   */
  compactSnapshot: `
    WITH ${CLOCK_CTE},
    old AS (SELECT base_ref FROM agent_snapshots WHERE agent_id = $2)
    UPDATE agent_snapshots SET version = version + 1, base = $3, base_ref = $4::jsonb, base_bytes = $5,
      deltas = '{}', deltas_bytes = 0, ttl_ms = $6, updated_at = clock.now, expires_at = clock.now + $6::bigint
    FROM clock
    WHERE agent_id = $2 AND version = $7 AND expires_at > clock.now
    RETURNING ${HEAD_COLUMNS}, (SELECT base_ref FROM old) AS replaced_ref`,

  /**
   * Append a delta to the live snapshot while it has room. Params: $1 now, $2 agent id, $3 patch (JSON
   * text), $4 patch bytes, $5 ttl (null: keep), $6 max deltas, $7 max deltas bytes.
   */
  appendDelta: `
    WITH ${CLOCK_CTE}
    UPDATE agent_snapshots SET version = version + 1, deltas = array_append(deltas, $3::text),
      deltas_bytes = deltas_bytes + $4, ttl_ms = COALESCE($5::bigint, ttl_ms), updated_at = clock.now,
      expires_at = clock.now + COALESCE($5::bigint, ttl_ms)
    FROM clock
    WHERE agent_id = $2 AND expires_at > clock.now AND cardinality(deltas) < $6
      AND deltas_bytes + $4 <= $7
    RETURNING ${HEAD_COLUMNS}`,

  /** The head of an agent's snapshot and whether it is live. Params: $1 now, $2 agent id. */
  selectHead: `
    WITH ${CLOCK_CTE}
    SELECT ${HEAD_COLUMNS}, expires_at > clock.now AS live FROM agent_snapshots, clock WHERE agent_id = $2`,

  /** Delete up to $2 expired snapshots; returns their bases' blobs. Params: $1 now, $2 limit. */
  deleteExpired: `
    WITH ${CLOCK_CTE}
    DELETE FROM agent_snapshots WHERE agent_id IN (
      SELECT agent_id FROM agent_snapshots, clock WHERE expires_at <= clock.now ORDER BY expires_at LIMIT $2)
      AND expires_at <= (SELECT now FROM clock)
    RETURNING base_ref`,
} as const;
