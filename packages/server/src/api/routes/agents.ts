/** Agent routes: register, claim (long-poll), heartbeat, leave, list, get, commands. */
import type {
  AgentCommand,
  AgentHeartbeatRequest,
  ClaimRequest,
  RegisterAgentRequest,
} from '@rouse/protocol';
import * as schemas from '@rouse/protocol/schemas';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { addRoute, callerOf, param, type RouteContext } from '../route-spec.js';
import { parseInput } from '../validate.js';

export function registerAgentRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { coordinator, metrics } = ctx;

  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/agents',
      access: 'register',
      summary: 'Register an agent (enrollment or admin token); returns its own token',
      body: schemas.registerAgent,
      bodyName: 'RegisterAgent',
      successStatus: 201,
    },
    async (request, reply) => {
      const body = parseInput(schemas.registerAgent, request.body, 'body') as RegisterAgentRequest;
      return reply.code(201).send(await coordinator.registerAgent(callerOf(request), body));
    },
  );

  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/agents/:agentId/claim',
      access: 'self',
      summary: 'Claim up to max tasks; long-polls up to waitMs and returns as soon as work is there',
      body: schemas.claim,
      bodyName: 'Claim',
    },
    async (request, reply) => {
      const body = parseInput(schemas.claim, request.body, 'body') as ClaimRequest;
      const caller = callerOf(request);
      const agentId = param(request, 'agentId');
      if (!body.waitMs) return coordinator.claim(caller, agentId, body);
      const signal = abortOnDisconnect(reply);
      metrics.claimWaiters++;
      try {
        return await coordinator.claim(caller, agentId, body, signal);
      } finally {
        metrics.claimWaiters--;
      }
    },
  );

  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/agents/:agentId/heartbeat',
      access: 'self',
      summary: "The agent's heartbeat, carrying the heartbeats of every task it holds",
      body: schemas.agentHeartbeat,
      bodyName: 'AgentHeartbeat',
      bodyLimit: ctx.limits.agentHeartbeatBytes,
    },
    async (request) => {
      const body = parseInput(schemas.agentHeartbeat, request.body, 'body') as AgentHeartbeatRequest;
      return coordinator.agentHeartbeat(callerOf(request), param(request, 'agentId'), body);
    },
  );

  addRoute(
    app,
    ctx,
    {
      method: 'DELETE',
      url: '/v1/agents/:agentId',
      access: 'self',
      summary: 'Graceful leave: held tasks time out at once and are retried without backoff',
    },
    async (request) => {
      await coordinator.leave(callerOf(request), param(request, 'agentId'));
      return { ok: true };
    },
  );

  addRoute(
    app,
    ctx,
    { method: 'GET', url: '/v1/agents', access: 'read', summary: 'List agents' },
    async (request) => ({
      agents: await coordinator.listAgents(callerOf(request)),
    }),
  );

  addRoute(
    app,
    ctx,
    { method: 'GET', url: '/v1/agents/:agentId', access: 'self', summary: 'One agent' },
    async (request) => ({ agent: await coordinator.getAgent(callerOf(request), param(request, 'agentId')) }),
  );

  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/agents/:agentId/commands',
      access: 'admin',
      summary: 'Queue a command for the agent (delivered on its next heartbeat)',
      body: schemas.agentCommand,
      bodyName: 'AgentCommand',
      successStatus: 202,
    },
    async (request, reply) => {
      const body = parseInput(schemas.agentCommand, request.body, 'body') as AgentCommand;
      await coordinator.sendCommand(callerOf(request), param(request, 'agentId'), body);
      return reply.code(202).send({ ok: true });
    },
  );
}

/** An AbortSignal that fires when the client disconnects before the response is written. */
function abortOnDisconnect(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const res = reply.raw;
  const onClose = () => {
    if (!res.writableEnded) controller.abort();
  };
  res.once('close', onClose);
  return controller.signal;
}
