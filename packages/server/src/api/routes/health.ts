/** `/healthz` (process up), `/readyz` (store reachable) and `/metrics` (Prometheus text). */
import type { FastifyInstance } from 'fastify';
import { RouseError, UnavailableError } from '../../core/errors.js';
import { addRoute, type RouteContext } from '../route-spec.js';

export function registerHealthRoutes(app: FastifyInstance, ctx: RouteContext): void {
  addRoute(
    app,
    ctx,
    { method: 'GET', url: '/healthz', access: 'public', summary: 'The process is up' },
    async () => ({
      ok: true,
    }),
  );

  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/readyz',
      access: 'public',
      summary: 'The store is reachable (503 unavailable if not)',
    },
    async () => {
      try {
        await ctx.coordinator.ready();
      } catch (err) {
        if (err instanceof RouseError) throw err;
        throw new UnavailableError('the store is unreachable; retry shortly', {
          cause: err instanceof Error ? err.message : String(err),
        });
      }
      return { ok: true };
    },
  );

  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/metrics',
      access: 'metrics',
      summary: 'Prometheus metrics (token needed unless the server runs with metricsPublic)',
      produces: ['text/plain'],
    },
    async (_request, reply) =>
      reply.type('text/plain; version=0.0.4; charset=utf-8').send(await ctx.metrics.renderAll()),
  );
}
