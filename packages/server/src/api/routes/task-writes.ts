/**
 * Holder writes (agent token or admin; `version` required): start, heartbeat, checkpoint, effect
 * keys, logs, complete, fail. The coordinator checks the version (`409 stale_version`) and that the caller
 * holds the task (`403 forbidden`).
 */
import type { ErrorCode } from '@rouse/protocol';
import { ERROR_STATUS } from '@rouse/protocol';
import * as schemas from '@rouse/protocol/schemas';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { RouseError } from '../../core/errors.js';
import { addCallRoute, addRoute, callerOf, param, type RouteContext } from '../route-spec.js';
import { parseInput } from '../validate.js';

export function registerTaskWriteRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { coordinator } = ctx;

  addCallRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/tasks/:id/start',
      access: 'holder',
      summary: 'claimed → running',
      body: schemas.startTask,
      bodyName: 'StartTask',
    },
    async (call) => {
      const body = parseInput(schemas.startTask, call.body, 'body');
      return { task: await coordinator.startTask(call.caller, call.param('id'), body.version) };
    },
  );

  addCallRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/tasks/:id/heartbeat',
      access: 'holder',
      summary: 'Renew the lease and report progress (≤ 4 KiB)',
      body: schemas.taskHeartbeat,
      bodyName: 'TaskHeartbeat',
      bodyLimit: ctx.limits.taskHeartbeatBytes,
    },
    async (call) => {
      const id = call.param('id');
      const body = parseInput(schemas.taskHeartbeat, call.body, 'body');
      const outcome = await coordinator.heartbeatTask(call.caller, id, body);
      if (!outcome.ok) {
        // A refused beat is an error on this single-task route (docs/protocol.md: stale version → 409).
        const code = (outcome.code && outcome.code in ERROR_STATUS ? outcome.code : 'conflict') as ErrorCode;
        throw new RouseError(code, `heartbeat for task ${id} refused: ${outcome.code ?? 'unknown reason'}`, {
          ...outcome,
        });
      }
      return outcome;
    },
  );

  addRoute(
    app,
    ctx,
    {
      method: 'PUT',
      url: '/v1/tasks/:id/checkpoint',
      access: 'holder',
      summary: 'Save resume state and session for the next attempt',
      body: schemas.checkpoint,
      bodyName: 'Checkpoint',
    },
    async (request) => {
      const body = parseInput(schemas.checkpoint, request.body, 'body');
      await coordinator.checkpointTask(callerOf(request), param(request, 'id'), body);
      return { ok: true };
    },
  );

  const effectKey = (request: FastifyRequest): string =>
    parseInput(schemas.effectKeyPath, { key: param(request, 'key') }, 'path').key;

  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/tasks/:id/effects/:key/claim',
      access: 'holder',
      summary:
        'Claim an effect key before a side effect that must happen once: claimed (run it), done (its recorded result) or running (ask again later)',
      body: schemas.claimEffect,
      bodyName: 'ClaimEffect',
    },
    async (request) => {
      const body = parseInput(schemas.claimEffect, request.body, 'body');
      return coordinator.claimEffect(callerOf(request), param(request, 'id'), effectKey(request), body);
    },
  );

  addRoute(
    app,
    ctx,
    {
      method: 'PUT',
      url: '/v1/tasks/:id/effects/:key',
      access: 'holder',
      summary: 'Record what the effect of a claimed key returned; later claims receive it',
      body: schemas.recordEffect,
      bodyName: 'RecordEffect',
    },
    async (request) => {
      const body = parseInput(schemas.recordEffect, request.body, 'body');
      return coordinator.recordEffect(callerOf(request), param(request, 'id'), effectKey(request), body);
    },
  );

  addRoute(
    app,
    ctx,
    {
      method: 'DELETE',
      url: '/v1/tasks/:id/effects/:key',
      access: 'holder',
      summary: 'Give a claim back (the effect failed): the key is free again',
      query: schemas.releaseEffectQuery,
      queryName: 'ReleaseEffectQuery',
    },
    async (request) => {
      const q = parseInput(schemas.releaseEffectQuery, request.query ?? {}, 'query');
      return coordinator.releaseEffect(
        callerOf(request),
        param(request, 'id'),
        effectKey(request),
        q.claimId,
      );
    },
  );

  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/tasks/:id/logs',
      access: 'holder',
      summary: 'Append log lines to the current attempt',
      body: schemas.appendLogs,
      bodyName: 'AppendLogs',
      bodyLimit: ctx.limits.logsBodyBytes,
    },
    async (request) => {
      const body = parseInput(schemas.appendLogs, request.body, 'body');
      return coordinator.appendLogs(callerOf(request), param(request, 'id'), body);
    },
  );

  addCallRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/tasks/:id/complete',
      access: 'holder',
      summary: 'running → completed (idempotent per version; inline result ≤ 64 KiB)',
      body: schemas.completeTask,
      bodyName: 'CompleteTask',
    },
    async (call) => {
      const body = parseInput(schemas.completeTask, call.body, 'body');
      return { task: await coordinator.completeTask(call.caller, call.param('id'), body) };
    },
  );

  addCallRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/tasks/:id/fail',
      access: 'holder',
      summary: 'running → failed (retried if attempts are left and the error is retryable)',
      body: schemas.failTask,
      bodyName: 'FailTask',
    },
    async (call) => {
      const body = parseInput(schemas.failTask, call.body, 'body');
      return { task: await coordinator.failTask(call.caller, call.param('id'), body) };
    },
  );
}
