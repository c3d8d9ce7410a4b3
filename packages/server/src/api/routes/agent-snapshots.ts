/**
 * Agent snapshots (docs/protocol.md "Snapshots"): `PUT /v1/agents/{id}/snapshot` stores a full
 * snapshot, `PATCH` applies a JSON merge patch (`application/merge-patch+json`, RFC 7386) to it, `GET`
 * returns the state composed. Writes take the agent's own token (or admin); reads also the read-only
 * token, but never another agent's.
 */
import * as schemas from '@rouse/protocol/schemas';
import type { FastifyInstance } from 'fastify';
import { type JsonParser, jsonBodyParser } from '../json-body.js';
import { addRoute, callerOf, param, type RouteContext } from '../route-spec.js';
import { parseInput } from '../validate.js';

/** The media type of a merge patch; plain JSON is taken as one too. */
export const MERGE_PATCH_TYPE = 'application/merge-patch+json';

export function registerAgentSnapshotRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { coordinator } = ctx;

  addRoute(
    app,
    ctx,
    {
      method: 'PUT',
      url: '/v1/agents/:agentId/snapshot',
      access: 'self',
      summary:
        "Store a full snapshot of the agent's own state (a JSON object), kept ttlMs after the write; the next incarnation receives it when it registers",
      body: schemas.putSnapshot,
      bodyName: 'PutSnapshot',
      bodyLimit: ctx.limits.snapshotBodyBytes,
    },
    async (request) => {
      const body = parseInput(schemas.putSnapshot, request.body, 'body');
      return { snapshot: await coordinator.putSnapshot(callerOf(request), param(request, 'agentId'), body) };
    },
  );

  // The patch route gets its own scope so that its media type is parsed as JSON there only.
  app.register(async (scope) => {
    const parseJson = scope.getDefaultJsonParser('error', 'error');
    scope.addContentTypeParser(
      MERGE_PATCH_TYPE,
      { parseAs: 'string' },
      jsonBodyParser(parseJson as JsonParser, ctx.limits.jsonMaxDepth),
    );

    addRoute(
      scope,
      ctx,
      {
        method: 'PATCH',
        url: '/v1/agents/:agentId/snapshot',
        access: 'self',
        summary:
          'An incremental snapshot: the body is a JSON merge patch (RFC 7386, application/merge-patch+json) on the current state; 404 when there is none to patch',
        body: schemas.snapshotPatch,
        bodyName: 'SnapshotPatch',
        bodyMediaType: MERGE_PATCH_TYPE,
        query: schemas.patchSnapshotQuery,
        queryName: 'PatchSnapshotQuery',
        bodyLimit: ctx.limits.snapshotBodyBytes,
      },
      async (request) => {
        const q = parseInput(schemas.patchSnapshotQuery, request.query ?? {}, 'query');
        const patch = parseInput(schemas.snapshotPatch, request.body, 'body');
        return {
          snapshot: await coordinator.patchSnapshot(
            callerOf(request),
            param(request, 'agentId'),
            patch,
            q.ttlMs,
          ),
        };
      },
    );
  });

  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/agents/:agentId/snapshot',
      access: 'self',
      summary: "The agent's current snapshot (the last full one with every patch since applied), or 404",
    },
    async (request) => ({
      snapshot: await coordinator.getSnapshot(callerOf(request), param(request, 'agentId')),
    }),
  );
}
