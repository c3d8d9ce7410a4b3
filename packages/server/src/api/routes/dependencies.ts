/** Dependencies agents need (docs/design.md §6): current states, and reports from agents or operators. */
import * as schemas from '@rouse/protocol/schemas';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { addRoute, callerOf, param, type RouteContext } from '../route-spec.js';
import { parseInput } from '../validate.js';

const nameParam = z.object({ name: schemas.name });

export function registerDependencyRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { coordinator } = ctx;

  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/dependencies',
      access: 'read',
      summary: 'Every known dependency and its state',
    },
    async (request) => ({ dependencies: await coordinator.listDependencies(callerOf(request)) }),
  );

  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/dependencies/:name/reports',
      access: 'agent',
      summary: 'Report a dependency up, down or rate-limited (agent or admin token)',
      body: schemas.dependencyReportBody,
      bodyName: 'DependencyReport',
    },
    async (request) => {
      // The name travels in the path; validate it with the same rule as in a heartbeat's report.
      const { name } = parseInput(nameParam, { name: param(request, 'name') }, 'path');
      const body = parseInput(schemas.dependencyReportBody, request.body, 'body');
      return { dependency: await coordinator.reportDependency(callerOf(request), { name, ...body }) };
    },
  );
}
