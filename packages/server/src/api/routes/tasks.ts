/** Task routes for operators: create, batch, list, get, events, diagnosis, cancel, retry. */

import { minimalCreatedReply } from '@rouse/protocol';
import * as schemas from '@rouse/protocol/schemas';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { TaskQuery } from '../../store/store.js';
import { addCallRoute, addRoute, callerOf, param, type RouteContext } from '../route-spec.js';
import { parseInput } from '../validate.js';

/** `POST /v1/tasks/{id}/retry` takes no fields; an empty object is accepted. */
export const emptyBody = z.object({}).strict();

export function registerTaskRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { coordinator } = ctx;

  addCallRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/tasks',
      access: 'admin',
      summary: 'Create a task (an existing idempotencyKey with the same type and payload returns it, 200)',
      body: schemas.createTask,
      bodyName: 'CreateTask',
      successStatus: 201,
    },
    async (call) => {
      const body = parseInput(schemas.createTask, call.body, 'body');
      const created = await coordinator.createTask(call.caller, body);
      if (!created.deduplicated) return { task: created.task };
      call.status(200);
      return { task: created.task, deduplicated: true };
    },
  );

  addCallRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/tasks/batch',
      access: 'admin',
      summary: 'Create many tasks, all or nothing',
      body: schemas.createTasksBatch,
      bodyName: 'CreateTasksBatch',
      bodyLimit: ctx.limits.batchBodyBytes,
      successStatus: 201,
    },
    async (call) => {
      const body = parseInput(schemas.createTasksBatch, call.body, 'body');
      const created = await coordinator.createTasks(call.caller, body.tasks);
      if (body.return === 'minimal') return minimalCreatedReply(created);
      return { tasks: created.map((c) => c.task) };
    },
  );

  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/tasks',
      access: 'read',
      summary:
        'List tasks (filters: status=a,b type agentId label=k:v; q= id, idempotency key or a word of the payload or labels; paged by cursor)',
      query: schemas.listTasksQuery,
      queryName: 'ListTasksQuery',
    },
    async (request) => {
      const q = parseInput(schemas.listTasksQuery, request.query ?? {}, 'query');
      return coordinator.listTasks(callerOf(request), toTaskQuery(q));
    },
  );

  addRoute(
    app,
    ctx,
    { method: 'GET', url: '/v1/tasks/:id', access: 'read', summary: 'One task' },
    async (request) => ({ task: await coordinator.getTask(callerOf(request), param(request, 'id')) }),
  );

  addRoute(
    app,
    ctx,
    { method: 'GET', url: '/v1/tasks/:id/events', access: 'read', summary: "The task's transition history" },
    async (request) => ({
      events: await coordinator.listTaskEvents(callerOf(request), param(request, 'id')),
    }),
  );

  addRoute(
    app,
    ctx,
    { method: 'GET', url: '/v1/tasks/:id/diagnosis', access: 'read', summary: 'Why the task is where it is' },
    async (request) => coordinator.diagnose(callerOf(request), param(request, 'id')),
  );

  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/tasks/:id/cancel',
      access: 'admin',
      summary: 'Cancel a non-final task (the holder learns it on its next heartbeat)',
      body: schemas.cancelTask,
      bodyName: 'CancelTask',
      bodyOptional: true,
    },
    async (request) => {
      const body = parseInput(schemas.cancelTask, request.body ?? {}, 'body');
      return { task: await coordinator.cancelTask(callerOf(request), param(request, 'id'), body.reason) };
    },
  );

  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/tasks/:id/retry',
      access: 'admin',
      summary: 'Give a final failed/timeout task one more attempt',
      body: emptyBody,
      bodyName: 'RetryTask',
      bodyOptional: true,
    },
    async (request) => {
      parseInput(emptyBody, request.body ?? {}, 'body');
      return { task: await coordinator.retryTask(callerOf(request), param(request, 'id')) };
    },
  );
}

export function toTaskQuery(q: z.output<typeof schemas.listTasksQuery>): TaskQuery {
  const query: TaskQuery = {};
  if (q.status !== undefined) query.statuses = q.status;
  if (q.type !== undefined) query.type = q.type;
  if (q.agentId !== undefined) query.agentId = q.agentId;
  if (q.label !== undefined) {
    const labels: Record<string, string> = {};
    for (const kv of [q.label].flat()) {
      const i = kv.indexOf(':');
      labels[kv.slice(0, i)] = kv.slice(i + 1);
    }
    query.labels = labels;
  }
  if (q.q !== undefined) query.search = q.q;
  if (q.limit !== undefined) query.limit = q.limit;
  if (q.cursor !== undefined) query.cursor = q.cursor;
  return query;
}
