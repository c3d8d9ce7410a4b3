/**
 * The PostgreSQL lease-shard and coordinator-presence statements (several coordinators, docs/design.md §6):
 * one named, parameterised statement per store operation; `$1` of timed statements is the store clock.
 */
import { CLOCK_CTE } from './sql-fragments.js';

export const SHARD_SQL = {
  /**
   * Renew every unexpired shard $2 holds, then take free or expired shards (never held, released or
   * lapsed, its own too) below $3, lowest first, up to $4 held in total, each until now + $5. A shard
   * nobody held starts at epoch 1; one taken again gets epoch + 1. The take is an upsert whose
   * condition (still expired) is checked on the locked row, so two coordinators racing for a shard
   * cannot both get it. Returns the shards $2 holds below $3.
   * Params: $1 now, $2 ownerId, $3 shardCount, $4 want, $5 ttlMs.
   */
  acquireShardLeases: `
    WITH ${CLOCK_CTE},
    renewed AS (
      UPDATE shard_leases s SET expires_at = clock.now + $5::bigint FROM clock
      WHERE s.owner_id = $2 AND s.expires_at > clock.now
      RETURNING s.shard, s.owner_id, s.epoch, s.expires_at
    ),
    wanted AS (
      SELECT g.shard FROM generate_series(0, $3::integer - 1) AS g(shard)
      CROSS JOIN clock
      LEFT JOIN shard_leases s ON s.shard = g.shard
      WHERE s.shard IS NULL OR s.expires_at <= clock.now
      ORDER BY g.shard
      LIMIT GREATEST($4::integer - (SELECT count(*) FROM renewed WHERE shard < $3::integer), 0)
    ),
    taken AS (
      INSERT INTO shard_leases AS s (shard, owner_id, epoch, expires_at)
      SELECT w.shard, $2, 1, clock.now + $5::bigint FROM wanted w CROSS JOIN clock
      ON CONFLICT (shard) DO UPDATE SET owner_id = EXCLUDED.owner_id, epoch = s.epoch + 1,
        expires_at = EXCLUDED.expires_at
      WHERE s.expires_at <= EXCLUDED.expires_at - $5::bigint
      RETURNING s.shard, s.owner_id, s.epoch, s.expires_at
    )
    SELECT * FROM renewed WHERE shard < $3::integer
    UNION ALL
    SELECT * FROM taken
    ORDER BY shard`,

  /**
   * Give up the shards $3 (null: every one, and withdraw the presence too) that $2 holds: they expire
   * now. Params: $1 now, $2 ownerId, $3 shards (integer[] or null).
   */
  releaseShardLeases: `
    WITH ${CLOCK_CTE},
    gone AS (DELETE FROM coordinators WHERE id = $2 AND $3::integer[] IS NULL)
    UPDATE shard_leases s SET expires_at = clock.now FROM clock
    WHERE s.owner_id = $2 AND s.expires_at > clock.now AND ($3::integer[] IS NULL OR s.shard = ANY($3::integer[]))`,

  /** Every shard lease, in shard order. No params. */
  selectShardLeases: 'SELECT shard, owner_id, epoch, expires_at FROM shard_leases ORDER BY shard',

  /**
   * Record $2 live until now + $3, forget expired presences, and return the live ones by id (the
   * caller's new row, `mine`, included). A live row of $2 that another instance wrote (a non-null $5
   * that differs) is left alone: no row is then `mine`, and that row is returned instead.
   * Params: $1 now, $2 ownerId, $3 ttlMs, $4 listening, $5 instance (null: take over any), $6 tokens.
   */
  announceCoordinator: `
    WITH ${CLOCK_CTE},
    gone AS (DELETE FROM coordinators c USING clock WHERE c.expires_at <= clock.now AND c.id <> $2),
    me AS (
      INSERT INTO coordinators AS c (id, last_seen_at, expires_at, listening, instance, tokens)
      SELECT $2, clock.now, clock.now + $3::bigint, $4::boolean, $5::text, $6::text FROM clock
      ON CONFLICT (id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at, expires_at = EXCLUDED.expires_at,
        listening = EXCLUDED.listening, instance = EXCLUDED.instance, tokens = EXCLUDED.tokens
      WHERE $5::text IS NULL OR c.instance IS NOT DISTINCT FROM $5::text OR c.expires_at <= EXCLUDED.last_seen_at
      RETURNING c.id, c.last_seen_at, c.expires_at, c.listening, c.tokens
    )
    SELECT id, last_seen_at, expires_at, listening, tokens, true AS mine FROM me
    UNION ALL
    SELECT c.id, c.last_seen_at, c.expires_at, c.listening, c.tokens, false AS mine FROM coordinators c CROSS JOIN clock
    WHERE c.expires_at > clock.now AND (c.id <> $2 OR NOT EXISTS (SELECT 1 FROM me))
    ORDER BY id`,

  /** Live coordinators by id. Params: $1 now. */
  selectLiveCoordinators: `
    WITH ${CLOCK_CTE}
    SELECT c.id, c.last_seen_at, c.expires_at, c.listening, c.tokens FROM coordinators c CROSS JOIN clock
    WHERE c.expires_at > clock.now ORDER BY c.id`,
} as const;
