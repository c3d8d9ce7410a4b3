/** What the watchdog did: the interventions and alerts pages, a page at a time. */
import { alertsView, interventionsView } from '@rouse/dashboard';
import type { FastifyRequest } from 'fastify';
import { RouseError } from '../../../core/errors.js';
import type { Site } from '../site.js';

/** Interventions and alerts per page. */
const LIST_PAGE = 50;

/** A list page's `cursor` and `limit` (1–100; absent: the default) from its query string. */
function listPageOf(request: FastifyRequest): { cursor?: string; limit?: number } {
  const q = request.query as Record<string, unknown>;
  const out: { cursor?: string; limit?: number } = {};
  if (typeof q.cursor === 'string' && q.cursor !== '') out.cursor = q.cursor;
  if (typeof q.limit === 'string' && q.limit !== '') {
    const limit = Number(q.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      throw new RouseError('validation_failed', 'limit: an integer from 1 to 100', {});
    out.limit = limit;
  }
  return out;
}

export function registerWatchdogPages(site: Site): void {
  const { scope, coordinator, requireSession, pageRoute } = site;

  pageRoute('/interventions', async (request, session, vc) => {
    const at = listPageOf(request);
    const r = await coordinator.listInterventions(session.caller, {
      limit: at.limit ?? LIST_PAGE,
      ...(at.cursor ? { cursor: at.cursor } : {}),
    });
    return interventionsView({ interventions: r.interventions, nextCursor: r.nextCursor, ...at }, vc);
  });

  pageRoute('/alerts', async (request, session, vc) => {
    const state = (request.query as Record<string, unknown>).state;
    const states = state === 'firing' || state === 'resolved' ? [state as 'firing' | 'resolved'] : undefined;
    const at = listPageOf(request);
    const r = await coordinator.listAlerts(session.caller, {
      ...(states ? { states } : {}),
      limit: at.limit ?? LIST_PAGE,
      ...(at.cursor ? { cursor: at.cursor } : {}),
    });
    return alertsView(
      { alerts: r.alerts, nextCursor: r.nextCursor, ...at, ...(states ? { state: states[0] } : {}) },
      vc,
    );
  });

  scope.get('/alerts/:id', async (request, reply) => {
    await requireSession(request);
    return reply
      .code(303)
      .redirect(`/alerts#alert-${encodeURIComponent((request.params as { id: string }).id)}`);
  });
}
