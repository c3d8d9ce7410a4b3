/**
 * The dashboard, served by the coordinator under `/` (the API stays under `/v1`): server-rendered
 * pages from `@rouse/dashboard`'s views, the data fetched from the coordinator as the session's role
 * (admin or read-only), a live stream per page, and form actions guarded by Origin and a per-session
 * CSRF token. Registered as its own Fastify context, so its form-body parser and its HTML error pages
 * do not reach the API.
 */
import { loginPage, messagePage } from '@rouse/dashboard';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RouseError } from '../../core/errors.js';
import { errorBody, type HtmlNotFound, toRouseError } from '../error-handler.js';
import type { RouteContext } from '../route-spec.js';
import { loadAssets } from './assets.js';
import { parseForm } from './form.js';
import { SharedReads } from './read-sharing.js';
import { registerActions } from './routes/actions.js';
import { registerAgentPages } from './routes/agents.js';
import { registerAssetRoutes } from './routes/assets.js';
import { registerDownloads } from './routes/downloads.js';
import { registerOverviewPages } from './routes/overview.js';
import { registerSignInRoutes } from './routes/sign-in.js';
import { registerTaskPages } from './routes/tasks.js';
import { registerWatchdogPages } from './routes/watchdog.js';
import type { BrowserSession } from './session.js';
import { createSite, isFragment, type Site } from './site.js';
import { BrowserStreams } from './stream.js';

const FORM_BODY_BYTES = 256 * 1024;

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  // same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on our own form posts.
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
} as const;

declare module 'fastify' {
  interface FastifyRequest {
    dashboardSession: BrowserSession | null;
    /** How long until the page's data would be computed anew, when it was shared and older than a change (ms; 0: current). */
    dashboardStaleMs: number;
  }
}

/** A browser's own navigation or form post (not the page script's fetches, nor the event stream). */
export function wantsHtml(request: FastifyRequest): boolean {
  return !isFragment(request) && (request.headers.accept ?? '').includes('text/html');
}

export function registerDashboard(app: FastifyInstance, ctx: RouteContext): { notFound: HtmlNotFound } {
  const { coordinator } = ctx;
  let registered: Site | undefined;
  const streams = new BrowserStreams(coordinator, ctx.sse);
  const reads = new SharedReads(
    () => streams.seq,
    () => coordinator.now(),
  );
  app.addHook('onClose', async () => streams.close());

  app.register(async (scope) => {
    const site = createSite({ scope, coordinator, assets: loadAssets(), streams, reads });
    registered = site;

    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: FORM_BODY_BYTES },
      (_request, body, done) => done(null, parseForm(body as string)),
    );
    scope.decorateRequest('dashboardSession', null);
    scope.decorateRequest('dashboardStaleMs', 0);

    scope.addHook('onSend', async (_request, reply, payload) => {
      reply.headers(SECURITY_HEADERS);
      return payload;
    });

    // A browser's own requests (a page, a plain form post) are answered in HTML; the page script's
    // fragments, the stream and its other fetches in the protocol's JSON.
    scope.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => {
      const known = toRouseError(err, request, ctx.limits);
      if (!known)
        request.log.error(
          { err, method: request.method, route: request.routeOptions.url },
          'dashboard error',
        );
      const e = known ?? new RouseError('internal', 'internal error; the coordinator logged the cause', {});
      const session = request.dashboardSession;
      if (!wantsHtml(request)) return reply.code(e.status).send(errorBody(e.code, e.message, e.details));
      const body =
        session === null
          ? loginPage(
              { error: e.code === 'unauthorized' ? 'Your session has ended: sign in again.' : e.message },
              site.urls,
            )
          : messagePage(
              e.code === 'not_found' ? 'Not found' : 'That did not work',
              e.message,
              site.viewContext(request, session),
              site.urls,
            );
      return reply
        .code(e.status)
        .header('cache-control', 'no-store')
        .type('text/html; charset=utf-8')
        .send(body.value);
    });

    registerAssetRoutes(site);
    registerSignInRoutes(site);
    registerOverviewPages(site);
    registerTaskPages(site);
    registerAgentPages(site);
    registerWatchdogPages(site);
    registerDownloads(site);
    registerActions(site);
  });

  /** A page that does not exist: "Not found" in the dashboard's frame, or the sign-in page. */
  const notFound: HtmlNotFound = (request, reply) => {
    const site = registered;
    if (site === undefined || !wantsHtml(request)) return null;
    return (async () => {
      const message = `There is no page at ${request.url.split('?')[0] ?? ''}.`;
      const session = await site.sessionOf(request);
      const body =
        session === null
          ? loginPage({ error: message }, site.urls)
          : messagePage('Not found', message, site.viewContext(request, session), site.urls);
      return reply
        .code(404)
        .headers(SECURITY_HEADERS)
        .header('cache-control', 'no-store')
        .type('text/html; charset=utf-8')
        .send(body.value);
    })();
  };
  return { notFound };
}
