/**
 * Browser sessions for the dashboard (docs/design.md "The dashboard"). A browser signs in with a
 * one-time login code (minted by `rouse serve` at start, by `rouse dashboard` through the admin-only
 * `POST /v1/dashboard/login-codes`) or by pasting a token; it then holds only a random session id in
 * an HttpOnly cookie — never the token. The store keeps the sha256 of codes and session ids, so every
 * coordinator sharing it accepts the session and a stolen database row opens nothing.
 *
 * A session's role is the token's: the admin token (or an admin code) gives `admin`, the read-only
 * token `readonly`; agent and enrollment tokens open no session. Each session has its own CSRF token,
 * which every write from its pages must carry.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import type { DashboardSession, SessionRole, Store } from '../store/store.js';
import { type Caller, hashToken, requireAdmin } from './auth.js';
import { every } from './periodic.js';

/** How long a one-time login code may wait to be used. */
export const LOGIN_CODE_TTL_MS = 5 * 60_000;
/** A session ends after this long without a request. */
export const SESSION_IDLE_MS = 12 * 60 * 60_000;
const SWEEP_BATCH = 1000;
/**
 * A session the store confirmed is trusted this long without asking again, so that a page's requests
 * (its refetches, its stream) do not each write the store. The cost: a session logged out through
 * ANOTHER coordinator may still be served here for up to this long; through this one, at once.
 */
export const SESSION_CACHE_MS = 5000;
const SESSION_CACHE_MAX = 10_000;

export interface OpenedSession {
  /** The secret the browser keeps in its cookie. */
  sessionId: string;
  csrfToken: string;
  role: SessionRole;
}

export interface DashboardSessions {
  /** A one-time login code for `role` (admin only); usable once within `LOGIN_CODE_TTL_MS`. */
  createLoginCode(caller: Caller, role: SessionRole): Promise<{ code: string; expiresAt: number }>;
  /** The same, for the coordinator's own process (`rouse serve` prints it). */
  mintLoginCode(role: SessionRole): Promise<{ code: string; expiresAt: number }>;
  /** Open a session with a login code or a token; null when it opens none. */
  openSession(credential: { code: string } | { token: string }): Promise<OpenedSession | null>;
  /** The live session of a cookie's id (its idle clock restarts), or null. */
  resumeSession(sessionId: string): Promise<DashboardSession | null>;
  /** Log out. */
  endSession(sessionId: string): Promise<void>;
  /** Delete expired codes and sessions now (also done every `intervalMs`). */
  sweep(): Promise<number>;
  start(): void;
  stop(): void;
}

const secret = (): string => randomBytes(32).toString('base64url');

export function createDashboardSessions(deps: {
  store: Pick<
    Store,
    'saveSession' | 'touchSession' | 'takeLoginCode' | 'deleteSession' | 'deleteExpiredSessions'
  >;
  authenticate: (token: string) => Promise<Caller | null>;
  clock: Clock;
  logger: Logger;
  intervalMs: number;
}): DashboardSessions {
  const { store, logger } = deps;
  /** session key → the session as the store last confirmed it, and when. */
  const confirmed = new Map<string, { session: DashboardSession; at: number }>();

  const mintLoginCode = async (role: SessionRole) => {
    const code = secret();
    await store.saveSession({
      key: hashToken(code),
      kind: 'login',
      role,
      csrfToken: '',
      ttlMs: LOGIN_CODE_TTL_MS,
    });
    return { code, expiresAt: deps.clock.now() + LOGIN_CODE_TTL_MS };
  };

  const open = async (role: SessionRole): Promise<OpenedSession> => {
    const sessionId = secret();
    const csrfToken = secret();
    await store.saveSession({
      key: hashToken(sessionId),
      kind: 'session',
      role,
      csrfToken,
      ttlMs: SESSION_IDLE_MS,
    });
    return { sessionId, csrfToken, role };
  };

  const sweep = async (): Promise<number> => {
    let total = 0;
    for (;;) {
      const n = await store.deleteExpiredSessions({ limit: SWEEP_BATCH });
      total += n;
      if (n < SWEEP_BATCH) break;
    }
    return total;
  };
  const loop = every(deps.clock, deps.intervalMs, sweep, (err) =>
    logger.warn({ err }, 'dashboard session sweep failed; trying again next time'),
  );

  return {
    async createLoginCode(caller, role) {
      requireAdmin(caller, 'mint dashboard login codes');
      return mintLoginCode(role);
    },
    mintLoginCode,
    async openSession(credential) {
      if ('code' in credential) {
        if (credential.code === '') return null;
        const taken = await store.takeLoginCode(hashToken(credential.code));
        return taken === null ? null : open(taken.role);
      }
      const caller = await deps.authenticate(credential.token.trim());
      if (caller?.kind === 'admin') return open('admin');
      if (caller?.kind === 'readonly') return open('readonly');
      return null;
    },
    async resumeSession(sessionId) {
      if (sessionId === '') return null;
      const key = hashToken(sessionId);
      const now = deps.clock.now();
      const hit = confirmed.get(key);
      if (hit !== undefined && now - hit.at < SESSION_CACHE_MS && now >= hit.at) return hit.session;
      const session = await store.touchSession({ key, idleMs: SESSION_IDLE_MS });
      if (session === null) {
        confirmed.delete(key);
        return null;
      }
      if (confirmed.size >= SESSION_CACHE_MAX) confirmed.clear();
      confirmed.set(key, { session, at: now });
      return session;
    },
    async endSession(sessionId) {
      if (sessionId === '') return;
      const key = hashToken(sessionId);
      confirmed.delete(key);
      await store.deleteSession(key);
    },
    sweep,
    start: () => loop.start(),
    stop: () => loop.stop(),
  };
}
