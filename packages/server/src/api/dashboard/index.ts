/**
 * The dashboard, served by the coordinator under `/` (the API stays under `/v1`): server-rendered
 * pages from `@rouse/dashboard`'s views, the data fetched from the coordinator as the session's role
 * (admin or read-only), a live stream per page, and form actions guarded by Origin and a per-session
 * CSRF token. Registered as its own Fastify context, so its form-body parser and its HTML error pages
 * do not reach the API.
 */
import { messagePage } from '@rouse/dashboard';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RouseError } from '../../core/errors.js';
import { errorBody, toRouseError } from '../error-handler.js';
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
import { createSite, isFragment } from './site.js';
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

export function registerDashboard(app: FastifyInstance, ctx: RouteContext): void {
  const { coordinator } = ctx;
  const streams = new BrowserStreams(coordinator, ctx.sse);
  const reads = new SharedReads(
    () => streams.seq,
    () => coordinator.now(),
  );
  app.addHook('onClose', async () => streams.close());

  app.register(async (scope) => {
    const site = createSite({ scope, coordinator, assets: loadAssets(), streams, reads });

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

    // Pages refused or missing answer in HTML; fragments, the stream and actions in the protocol's JSON.
    scope.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => {
      const known = toRouseError(err, request, ctx.limits);
      if (!known)
        request.log.error(
          { err, method: request.method, route: request.routeOptions.url },
          'dashboard error',
        );
      const e = known ?? new RouseError('internal', 'internal error; the coordinator logged the cause', {});
      const session = request.dashboardSession;
      if (request.method === 'GET' && !isFragment(request) && session !== null) {
        return reply
          .code(e.status)
          .type('text/html; charset=utf-8')
          .send(
            messagePage(
              e.code === 'not_found' ? 'Not found' : 'Error',
              e.message,
              site.viewContext(request, session),
              site.urls,
            ).value,
          );
      }
      return reply.code(e.status).send(errorBody(e.code, e.message, e.details));
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
}
