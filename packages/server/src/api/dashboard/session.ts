/**
 * The dashboard's side of browser auth: the session cookie (HttpOnly, SameSite=Strict, Path=/; Secure
 * over HTTPS) holding a random session id, never a token; the hook that turns it into a session; and
 * the checks every write from a page passes — same Origin, the session's CSRF token, an admin session.
 * Refusals are the protocol's `{"error": {code, message}}`.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RouseError } from '../../core/errors.js';
import type { Caller } from '../../services/coordinator.js';
import { SESSION_IDLE_MS } from '../../services/dashboard-sessions.js';
import type { DashboardSession } from '../../store/store.js';

export const COOKIE = 'rouse_session';

export interface BrowserSession extends DashboardSession {
  id: string;
  caller: Caller;
}

/** The session id from the Cookie header, or ''. */
export function sessionIdOf(request: FastifyRequest): string {
  const header = request.headers.cookie ?? '';
  for (const part of header.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === COOKIE) return rest.join('=').trim();
  }
  return '';
}

function secure(request: FastifyRequest): string {
  return request.protocol === 'https' ? '; Secure' : '';
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, sessionId: string): void {
  reply.header(
    'set-cookie',
    `${COOKIE}=${sessionId}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${SESSION_IDLE_MS / 1000}${secure(request)}`,
  );
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('set-cookie', `${COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0${secure(request)}`);
}

export function callerOfRole(role: DashboardSession['role']): Caller {
  return role === 'admin' ? { kind: 'admin' } : { kind: 'readonly' };
}

/**
 * A write must come from one of our own pages: the Origin header (which browsers send on every POST)
 * must be this server's; a request without one is refused too.
 */
export function checkOrigin(request: FastifyRequest): void {
  const origin = request.headers.origin;
  const host = request.headers.host;
  if (origin === undefined || host === undefined || origin !== `${request.protocol}://${host}`) {
    throw new RouseError(
      'forbidden',
      'cross-site request refused: the Origin header must be this dashboard’s own',
      {},
    );
  }
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

/** Same origin, the session's CSRF token (field `_csrf` or header `x-csrf-token`), and, with `admin`, an admin session. */
export function checkWrite(
  request: FastifyRequest,
  session: BrowserSession,
  presented: string | undefined,
  admin: boolean,
): void {
  checkOrigin(request);
  const token = presented ?? (request.headers['x-csrf-token'] as string | undefined) ?? '';
  if (!sameSecret(token, session.csrfToken)) {
    throw new RouseError('forbidden', 'missing or wrong CSRF token; reload the page and try again', {});
  }
  if (admin && session.role !== 'admin') {
    throw new RouseError('forbidden', 'this session is read-only: sign in with the admin token to act', {});
  }
}
