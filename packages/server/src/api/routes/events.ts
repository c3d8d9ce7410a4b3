/**
 * `GET /v1/events`: the live event stream as SSE. Each frame is `event: <type>` and `data: <json>`
 * (the event with `type`, `at` and its entity); comment lines keep idle streams open. The stream ends
 * when its token is revoked (sse.ts).
 */
import type { FastifyInstance } from 'fastify';
import { stillAuthenticated } from '../auth.js';
import { addRoute, callerOf, type RouteContext } from '../route-spec.js';

export function registerEventRoutes(app: FastifyInstance, ctx: RouteContext): void {
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/events',
      access: 'read',
      summary:
        'Live events (SSE): task.created, task.transition, task.progress, agent.registered, agent.status, agent.condition, intervention, alert',
      produces: ['text/event-stream'],
    },
    async (request, reply) => {
      const stillAllowed = stillAuthenticated(ctx.coordinator, request, callerOf(request));
      const stream = ctx.sse.open(reply, { stillAllowed });
      if (stream.closed) return; // HEAD: headers only
      const unsubscribe = ctx.coordinator.subscribe(
        (event) => {
          stream.send(event.type, JSON.stringify(event));
        },
        { everyCoordinator: true },
      );
      stream.signal.addEventListener('abort', unsubscribe, { once: true });
    },
  );
}
