/** Agent routes: register, claim (long-poll), heartbeat, leave, list, get, diagnosis, conditions, commands, interventions. */
import * as schemas from '@rouse/protocol/schemas';
import type { FastifyInstance } from 'fastify';
import {
  abortOnDisconnect,
  addCallRoute,
  addRoute,
  callerOf,
  param,
  type RouteContext,
} from '../route-spec.js';
import { parseInput } from '../validate.js';

/** Agents per page of `GET /v1/agents` unless `limit` says. */
const AGENTS_PAGE = 1000;
const INTERVENTIONS_PAGE = 100;

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
      const body = parseInput(schemas.registerAgent, request.body, 'body');
      return reply.code(201).send(await coordinator.registerAgent(callerOf(request), body));
    },
  );

  addCallRoute(
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
    async (call) => {
      const body = parseInput(schemas.claim, call.body, 'body');
      const agentId = call.param('agentId');
      if (!body.waitMs) return coordinator.claim(call.caller, agentId, body);
      metrics.claimWaiters++;
      try {
        return await coordinator.claim(call.caller, agentId, body, call.signal());
      } finally {
        metrics.claimWaiters--;
      }
    },
  );

  addCallRoute(
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
    async (call) => {
      const started = performance.now();
      let outcome = 'error';
      try {
        const body = parseInput(schemas.agentHeartbeat, call.body, 'body');
        const res = await coordinator.agentHeartbeat(call.caller, call.param('agentId'), body);
        outcome = 'ok';
        return res;
      } finally {
        metrics.inc('rouse_agent_heartbeats_total', { outcome });
        metrics.observe('rouse_agent_heartbeat_duration_seconds', (performance.now() - started) / 1000);
      }
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
    {
      method: 'GET',
      url: '/v1/agents',
      access: 'read',
      summary:
        'List agents with their derived status and open conditions (filter by status, agentType, taskType)',
      query: schemas.listAgentsQuery,
      queryName: 'ListAgentsQuery',
    },
    async (request) => {
      const q = parseInput(schemas.listAgentsQuery, request.query ?? {}, 'query');
      return coordinator.listAgents(callerOf(request), {
        ...(q.status === undefined ? {} : { statuses: q.status }),
        ...(q.agentType === undefined ? {} : { agentType: q.agentType }),
        ...(q.taskType === undefined ? {} : { taskType: q.taskType }),
        limit: q.limit ?? AGENTS_PAGE,
        ...(q.cursor === undefined ? {} : { cursor: q.cursor }),
      });
    },
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
      method: 'GET',
      url: '/v1/agents/:agentId/diagnosis',
      access: 'read',
      summary: 'Why the agent is in its status: reasons with evidence, and what to do',
    },
    async (request) => coordinator.diagnoseAgent(callerOf(request), param(request, 'agentId')),
  );

  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/agents/:agentId/conditions',
      access: 'read',
      summary: "The agent's conditions, open and closed, newest first",
      query: schemas.conditionsQuery,
      queryName: 'ConditionsQuery',
    },
    async (request) => {
      const agentId = param(request, 'agentId');
      const q = parseInput(schemas.conditionsQuery, request.query ?? {}, 'query');
      const caller = callerOf(request);
      await coordinator.getAgent(caller, agentId);
      const conditions = await coordinator.listConditions(caller, {
        agentId,
        ...(q.open === undefined ? {} : { open: q.open === 'true' }),
        limit: q.limit ?? 100,
      });
      return { conditions };
    },
  );

  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/agents/:agentId/commands',
      access: 'admin',
      summary:
        'Queue a command for the agent (delivered on its next heartbeat, with an id its acknowledgement names); wake, restart and terminate are recorded as a manual intervention',
      body: schemas.agentCommand,
      bodyName: 'AgentCommand',
      successStatus: 202,
    },
    async (request, reply) => {
      const body = parseInput(schemas.agentCommand, request.body, 'body');
      const sent = await coordinator.sendCommand(callerOf(request), param(request, 'agentId'), body);
      return reply.code(202).send({ ok: true, ...sent });
    },
  );

  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/agents/:agentId/commands/next',
      access: 'self',
      summary:
        "Take the agent's queued commands; long-polls up to waitMs for one (a supervisor gets restarts and kills for its children at once)",
      body: schemas.nextCommands,
      bodyName: 'NextCommands',
    },
    async (request, reply) => {
      const body = parseInput(schemas.nextCommands, request.body ?? {}, 'body');
      const caller = callerOf(request);
      const agentId = param(request, 'agentId');
      if (!body.waitMs) return coordinator.nextCommands(caller, agentId, body);
      return coordinator.nextCommands(caller, agentId, body, abortOnDisconnect(reply));
    },
  );

  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/agents/:agentId/commands/acks',
      access: 'self',
      summary:
        'Answer commands taken, at once rather than with the next heartbeat (a supervisor reports a signal sent or a child restarted)',
      body: schemas.commandAcks,
      bodyName: 'CommandAcks',
    },
    async (request) => {
      const body = parseInput(schemas.commandAcks, request.body, 'body');
      return coordinator.acknowledgeCommands(callerOf(request), param(request, 'agentId'), body);
    },
  );

  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/interventions',
      access: 'read',
      summary: 'Interventions on agents, newest first (filter by agentId, taskId, state; paged)',
      query: schemas.interventionsQuery,
      queryName: 'InterventionsQuery',
    },
    async (request) => {
      const q = parseInput(schemas.interventionsQuery, request.query ?? {}, 'query');
      return coordinator.listInterventions(callerOf(request), {
        ...(q.agentId === undefined ? {} : { agentId: q.agentId }),
        ...(q.taskId === undefined ? {} : { taskId: q.taskId }),
        ...(q.state === undefined ? {} : { states: q.state }),
        limit: q.limit ?? INTERVENTIONS_PAGE,
        ...(q.cursor === undefined ? {} : { cursor: q.cursor }),
      });
    },
  );

  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/interventions/:id',
      access: 'read',
      summary: 'One intervention, with its evidence',
    },
    async (request) => ({
      intervention: await coordinator.getIntervention(callerOf(request), param(request, 'id')),
    }),
  );
}
