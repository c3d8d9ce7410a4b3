/**
 * What the dashboard's routes share within its Fastify context: the coordinator, the asset URLs, the
 * browser streams, the session lookups, the page renderer and the reads shared between pages.
 */
import { type AssetUrls, type Html, page, type View, type ViewContext } from '@rouse/dashboard';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RouseError } from '../../core/errors.js';
import type { Coordinator } from '../../services/coordinator.js';
import type { Assets } from './assets.js';
import { type Form, one } from './form.js';
import type { SharedReads, ShareOptions } from './read-sharing.js';
import { type BrowserSession, callerOfRole, checkWrite, sessionIdOf } from './session.js';
import type { BrowserStreams } from './stream.js';

export interface Site {
  readonly scope: FastifyInstance;
  readonly coordinator: Coordinator;
  readonly assets: Assets;
  readonly urls: AssetUrls;
  readonly streams: BrowserStreams;
  viewContext(request: FastifyRequest, session: BrowserSession): ViewContext;
  /** The request's session, or null (and the request remembers it for the error pages). */
  sessionOf(request: FastifyRequest): Promise<BrowserSession | null>;
  /** The request's session; `401 unauthorized` without one. */
  requireSession(request: FastifyRequest): Promise<BrowserSession>;
  /** An admin session for a form action, its Origin and CSRF token checked. */
  writeSession(request: FastifyRequest): Promise<BrowserSession>;
  sendHtml(reply: FastifyReply, body: Html, status?: number): FastifyReply;
  /** A page: redirected to the login page without a session; only the live region for the page's script. */
  pageRoute(
    url: string,
    load: (request: FastifyRequest, session: BrowserSession, vc: ViewContext) => Promise<View>,
  ): void;
  /** A read shared between the pages of a role (see read-sharing.ts); its staleness goes to the page. */
  shared<T>(request: FastifyRequest, key: string, options: ShareOptions, load: () => Promise<T>): Promise<T>;
}

export function isFragment(request: FastifyRequest): boolean {
  return request.headers['x-rouse-fragment'] === '1';
}

export function createSite(parts: {
  scope: FastifyInstance;
  coordinator: Coordinator;
  assets: Assets;
  streams: BrowserStreams;
  reads: SharedReads;
}): Site {
  const { scope, coordinator, assets, streams, reads } = parts;
  const urls = assets.urls;

  const viewContext = (request: FastifyRequest, session: BrowserSession): ViewContext => ({
    now: coordinator.now(),
    role: session.role,
    csrf: session.csrfToken,
    here: request.url,
  });

  async function sessionOf(request: FastifyRequest): Promise<BrowserSession | null> {
    const id = sessionIdOf(request);
    if (id === '') return null;
    const s = await coordinator.dashboard.resumeSession(id);
    if (s === null) return null;
    const session = { ...s, id, caller: callerOfRole(s.role) };
    request.dashboardSession = session;
    return session;
  }

  async function requireSession(request: FastifyRequest): Promise<BrowserSession> {
    const s = await sessionOf(request);
    if (s === null) throw new RouseError('unauthorized', 'no dashboard session: sign in at /login', {});
    return s;
  }

  async function writeSession(request: FastifyRequest): Promise<BrowserSession> {
    const session = await requireSession(request);
    checkWrite(request, session, one((request.body ?? {}) as Form, '_csrf'), true);
    return session;
  }

  const sendHtml = (reply: FastifyReply, body: Html, status = 200): FastifyReply =>
    reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(body.value);

  function pageRoute(
    url: string,
    load: (request: FastifyRequest, session: BrowserSession, vc: ViewContext) => Promise<View>,
  ): void {
    scope.get(url, async (request, reply) => {
      const session = await sessionOf(request);
      if (session === null) {
        if (isFragment(request))
          throw new RouseError('unauthorized', 'no dashboard session: sign in at /login', {});
        return reply.code(303).header('cache-control', 'no-store').redirect('/login');
      }
      const vc = viewContext(request, session);
      const view = await load(request, session, vc);
      if (!isFragment(request)) return sendHtml(reply, page(view, vc, urls));
      // Shared data older than the newest change: the page asks again when a fresh answer is due.
      if (request.dashboardStaleMs > 0) reply.header('x-rouse-refresh-in', String(request.dashboardStaleMs));
      // The cadence without events may change with the data (a task that ended needs none).
      reply.header('x-rouse-refresh-every', String(view.refreshEveryMs ?? 0));
      return sendHtml(reply, view.live);
    });
  }

  function shared<T>(
    request: FastifyRequest,
    key: string,
    options: ShareOptions,
    load: () => Promise<T>,
  ): Promise<T> {
    const r = reads.read(key, options, load);
    request.dashboardStaleMs = Math.max(request.dashboardStaleMs, r.staleMs);
    return r.value;
  }

  return {
    scope,
    coordinator,
    assets,
    urls,
    streams,
    viewContext,
    sessionOf,
    requireSession,
    writeSession,
    sendHtml,
    pageRoute,
    shared,
  };
}
