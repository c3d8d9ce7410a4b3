/**
 * The dashboard-sessions part of the Store contract (docs/design.md "The dashboard"): a browser signs
 * in with a one-time login code or a token and gets a session; both are kept here so that every
 * coordinator sharing the store accepts them. The store never sees a secret: `key` is the sha256 of
 * the code or session id the browser holds. A `login` row is a one-time code (taken once, atomically);
 * a `session` row lives while it is used (each touch pushes its expiry `idleMs` ahead) and ends on log
 * out or when idle too long. Part of `Store` (`store.ts`).
 */

/** What a session may do: the admin token's actions, or only read. */
export type SessionRole = 'admin' | 'readonly';

export interface SaveSessionInput {
  /** sha256 (hex) of the secret the browser holds. */
  key: string;
  kind: 'login' | 'session';
  role: SessionRole;
  /** The session's CSRF token (sent back by every write from its pages); '' for a login code. */
  csrfToken: string;
  /** The row lives this long from now (for a session: until touched again). */
  ttlMs: number;
}

export interface DashboardSession {
  role: SessionRole;
  csrfToken: string;
  createdAt: number;
  /** After the touch that returned it. */
  expiresAt: number;
}

export interface SessionStore {
  /** Keep a new login code or session (a key that exists already is replaced). */
  saveSession(input: SaveSessionInput): Promise<void>;
  /**
   * A live session by key, its expiry pushed to now + `idleMs`; null when unknown, expired, or a
   * login code.
   */
  touchSession(input: { key: string; idleMs: number }): Promise<DashboardSession | null>;
  /**
   * Use a one-time login code: it is deleted in the same statement, so of two racing uses exactly one
   * gets its role; null when unknown, used, or expired.
   */
  takeLoginCode(key: string): Promise<{ role: SessionRole } | null>;
  /** End a session (log out); false when there was none. */
  deleteSession(key: string): Promise<boolean>;
  /** Delete up to `limit` expired codes and sessions; returns how many. */
  deleteExpiredSessions(input: { limit: number }): Promise<number>;
}
