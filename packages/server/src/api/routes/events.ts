/**
 * `GET /v1/events`: the live event stream as SSE. Each frame is `event: <type>` and `data: <json>`
 * (the event with `type`, `at` and its entity); comment lines keep idle streams open.
 */
import type { FastifyInstance } from 'fastify';
import { addRoute, type RouteContext } from '../route-spec.js';

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
    async (_request, reply) => {
      const stream = ctx.sse.open(reply);
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
