/**
 * `POST /v1/dashboard/login-codes` (admin): a one-time login code for the dashboard, as `rouse
 * dashboard` prints it. The code opens one browser session (docs/protocol.md "Dashboard").
 */
import type { LoginCodeResponse } from '@rouse/protocol';
import * as schemas from '@rouse/protocol/schemas';
import type { FastifyInstance } from 'fastify';
import { addRoute, callerOf, type RouteContext } from '../route-spec.js';
import { parseInput } from '../validate.js';

export function registerDashboardLoginRoutes(app: FastifyInstance, ctx: RouteContext): void {
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/dashboard/login-codes',
      access: 'admin',
      summary: 'Mint a one-time dashboard login code (open /login?once=<code> within 5 minutes)',
      body: schemas.createLoginCode,
      bodyName: 'CreateLoginCode',
      bodyOptional: true,
      successStatus: 201,
    },
    async (request, reply) => {
      const body = parseInput(schemas.createLoginCode, request.body ?? {}, 'body');
      const role = body.role ?? 'admin';
      const { code, expiresAt } = await ctx.coordinator.dashboard.createLoginCode(callerOf(request), role);
      const response: LoginCodeResponse = { code, path: `/login?once=${code}`, role, expiresAt };
      return reply.code(201).send(response);
    },
  );
}
