/**
 * SQL pieces the PostgreSQL statements share: the store clock, the task column list, the history
 * insert, and the lease and backoff arithmetic. The arithmetic mirrors `core/timing.ts`
 * (`leaseDeadline`) and `core/backoff.ts` (`backoffDelayMs`) exactly — it runs in SQL so that the
 * database's clock decides (docs/design.md §3) without a round trip to read it first; the shared contract
 * suite checks both backends compute the same values.
 */
import { TASK_COLUMN_NAMES } from '../task-columns.js';

/**
 * The store clock, as a CTE every timed statement starts with. `$1` is the injected clock's now
 * (tests), or null for the database's own `now()` (transaction start, in epoch ms).
 */
export const CLOCK_CTE =
  'clock AS (SELECT COALESCE($1::bigint, floor(extract(epoch FROM now()) * 1000)::bigint) AS now)';

export { TASK_COLUMN_NAMES };

/** The task columns, qualified with `alias` (for statements that join). */
export function taskColumns(alias = 't'): string {
  return TASK_COLUMN_NAMES.map((c) => `${alias}.${c}`).join(', ');
}

export const EVENT_COLUMNS =
  'task_id, seq, at, from_status, to_status, version, attempt, actor, reason, details';

/** The history entries the CTE `cte` inserted for the task row `u`, oldest first, as JSON. */
export function eventsOf(cte: string): string {
  return `COALESCE((SELECT jsonb_agg(to_jsonb(e) ORDER BY e.seq) FROM ${cte} e WHERE e.task_id = u.id), '[]'::jsonb) AS events`;
}

/**
 * `leaseDeadline(kind, now, timing, startedAt)`: claim → now + claimTimeoutMs; start/heartbeat →
 * min(now + heartbeatTimeoutMs, (startedAt ?? now) + attemptDeadlineMs). LEAST ignores the null of
 * "no attempt deadline".
 */
export function leaseDeadlineSql(kind: 'claim' | 'start' | 'heartbeat', t: string, now: string): string {
  if (kind === 'claim') return `${now} + ${t}.claim_timeout_ms`;
  const startedAt = kind === 'start' ? now : `COALESCE(${t}.started_at, ${now})`;
  return `LEAST(${now} + ${t}.heartbeat_timeout_ms, ${startedAt} + ${t}.attempt_deadline_ms)`;
}

/**
 * `backoffDelayMs(attempt, {baseMs, capMs, jitter}, Math.random)` with the options in parameters
 * `$base`, `$cap`, `$jitter`: min(cap, base × 2^(n-1)), n = max(1, attempt), ± jitter. The exponent is
 * capped at 100, where any base ≥ 1 is past any cap (as Infinity is in JS).
 */
export function backoffSql(attempt: string, base: string, cap: string, jitter: string): string {
  const raw = `LEAST(${cap}::float8, ${base}::float8 * power(2::float8, LEAST(GREATEST(${attempt}, 1) - 1, 100)))`;
  return `(CASE WHEN ${jitter}::float8 = 0 THEN ${raw}
      ELSE GREATEST(0, LEAST(${cap}::float8, round(${raw} + ${raw} * ${jitter}::float8 * (2 * random() - 1)))) END)::bigint`;
}

/**
 * `backoffSql` with the task's own backoff (its `backoff` column, from its type) when it has one, else
 * the parameters `$base`, `$cap`, `$jitter` (the coordinator's).
 */
export function taskBackoffSql(t: string, base: string, cap: string, jitter: string): string {
  const own = (field: string, param: string, type: string) =>
    `COALESCE((${t}.backoff->>'${field}')::${type}, ${param}::${type})`;
  return backoffSql(
    `${t}.attempt`,
    own('baseMs', base, 'float8'),
    own('capMs', cap, 'float8'),
    own('jitter', jitter, 'float8'),
  );
}

/** `isFinal(status, nextAttemptAt)` of task alias `t`. */
export function finalSql(t: string): string {
  return `(${t}.status IN ('completed', 'cancelled') OR (${t}.status IN ('failed', 'timeout') AND ${t}.next_attempt_at IS NULL))`;
}
