/** The PostgreSQL dashboard-session statements (see `session-store.ts`). `$1` is the store clock's now or null. */
import { CLOCK_CTE } from './sql-fragments.js';

export const SESSION_SQL = {
  /** Params: $1 now, $2 key, $3 kind, $4 role, $5 csrf token, $6 ttl. */
  saveSession: `
    WITH ${CLOCK_CTE}
    INSERT INTO dashboard_sessions (session_key, kind, role, csrf_token, created_at, expires_at)
    SELECT $2, $3, $4, $5, clock.now, clock.now + $6::bigint FROM clock
    ON CONFLICT (session_key) DO UPDATE SET kind = excluded.kind, role = excluded.role,
      csrf_token = excluded.csrf_token, created_at = excluded.created_at, expires_at = excluded.expires_at`,

  /** A live session, its expiry moved ahead. Params: $1 now, $2 key, $3 idle ms. */
  touchSession: `
    WITH ${CLOCK_CTE}
    UPDATE dashboard_sessions SET expires_at = clock.now + $3::bigint FROM clock
    WHERE session_key = $2 AND kind = 'session' AND expires_at > clock.now
    RETURNING role, csrf_token, created_at, expires_at`,

  /** Params: $1 now, $2 key. */
  takeLoginCode: `
    WITH ${CLOCK_CTE}
    DELETE FROM dashboard_sessions USING clock
    WHERE session_key = $2 AND kind = 'login' AND expires_at > clock.now
    RETURNING role`,

  /** Params: $1 key. */
  deleteSession: `DELETE FROM dashboard_sessions WHERE session_key = $1 AND kind = 'session'`,

  /** Params: $1 now, $2 limit. */
  deleteExpiredSessions: `
    WITH ${CLOCK_CTE}
    DELETE FROM dashboard_sessions WHERE session_key IN (
      SELECT session_key FROM dashboard_sessions, clock WHERE expires_at <= clock.now
      ORDER BY expires_at LIMIT $2)`,
} as const;
