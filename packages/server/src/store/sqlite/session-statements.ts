/** The SQLite dashboard-session statements (see `session-store.ts`), prepared once per connection. */
export const SESSION_SQL = {
  /** Params: @key, @kind, @role, @csrfToken, @now, @expiresAt. */
  saveSession: `
    INSERT OR REPLACE INTO dashboard_sessions (session_key, kind, role, csrf_token, created_at, expires_at)
    VALUES (@key, @kind, @role, @csrfToken, @now, @expiresAt)`,

  /** A live session, its expiry moved ahead. Params: @key, @now, @expiresAt. */
  touchSession: `
    UPDATE dashboard_sessions SET expires_at = @expiresAt
    WHERE session_key = @key AND kind = 'session' AND expires_at > @now
    RETURNING role, csrf_token, created_at, expires_at`,

  /** Params: @key, @now. */
  takeLoginCode: `
    DELETE FROM dashboard_sessions WHERE session_key = @key AND kind = 'login' AND expires_at > @now
    RETURNING role`,

  /** Params: @key. */
  deleteSession: `DELETE FROM dashboard_sessions WHERE session_key = @key AND kind = 'session'`,

  /** Params: @now, @limit. */
  deleteExpiredSessions: `
    DELETE FROM dashboard_sessions WHERE session_key IN (
      SELECT session_key FROM dashboard_sessions WHERE expires_at <= @now ORDER BY expires_at LIMIT @limit)`,
} as const;
