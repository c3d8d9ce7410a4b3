/** `GET /v1/openapi.json`: the OpenAPI 3.1 document of every route (built once, on first request). */
import type { FastifyInstance } from 'fastify';
import { buildOpenApiDocument } from '../openapi.js';
import { addRoute, type RouteContext } from '../route-spec.js';

export function registerOpenApiRoute(app: FastifyInstance, ctx: RouteContext, version: string): void {
  let document: string | undefined;
  addRoute(
    app,
    ctx,
    { method: 'GET', url: '/v1/openapi.json', access: 'read', summary: 'This document' },
    async (_request, reply) => {
      document ??= JSON.stringify(buildOpenApiDocument(ctx.routes, { version }));
      return reply.type('application/json; charset=utf-8').send(document);
    },
  );
}
