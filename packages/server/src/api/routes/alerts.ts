/** Alert routes: the alerts, newest first, and one alert with its delivery attempts (read token). */
import * as schemas from '@rouse/protocol/schemas';
import type { FastifyInstance } from 'fastify';
import { addRoute, callerOf, param, type RouteContext } from '../route-spec.js';
import { parseInput } from '../validate.js';

/** Alerts per page of `GET /v1/alerts` unless `limit` says. */
const ALERTS_PAGE = 100;

export function registerAlertRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { coordinator } = ctx;

  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/alerts',
      access: 'read',
      summary: 'Alerts grouped by agent type and condition, newest first (filter by state; paged)',
      query: schemas.alertsQuery,
      queryName: 'AlertsQuery',
    },
    async (request) => {
      const q = parseInput(schemas.alertsQuery, request.query ?? {}, 'query');
      return coordinator.listAlerts(callerOf(request), {
        ...(q.state === undefined ? {} : { states: q.state }),
        limit: q.limit ?? ALERTS_PAGE,
        ...(q.cursor === undefined ? {} : { cursor: q.cursor }),
      });
    },
  );

  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/alerts/:id',
      access: 'read',
      summary: 'One alert, with its agents and its notifications (every delivery attempt)',
    },
    async (request) => ({ alert: await coordinator.getAlert(callerOf(request), param(request, 'id')) }),
  );
}
