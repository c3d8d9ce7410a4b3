/**
 * The watchdog's policies (docs/design.md §6.3): the ones in force (`GET /v1/policies`), and checking a
 * policy file without applying it (`POST /v1/policies/check`: JSON `{source, file?}`, or the YAML text
 * itself as `application/yaml`). A check answers 200 whether or not the file is valid.
 */
import * as schemas from '@rouse/protocol/schemas';
import type { FastifyInstance } from 'fastify';
import { addRoute, callerOf, type RouteContext } from '../route-spec.js';
import { parseInput } from '../validate.js';

const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml'];

export function registerPolicyRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { coordinator } = ctx;

  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/policies',
      access: 'read',
      summary: 'The policies in force, the file they came from, and the last refused reload',
    },
    async (request) => coordinator.policies(callerOf(request)),
  );

  // Its own scope, so that its YAML parser applies to this route only.
  app.register(async (scope) => {
    scope.addContentTypeParser(
      YAML_TYPES,
      { parseAs: 'string', bodyLimit: schemas.MAX_POLICY_SOURCE_BYTES },
      (_request, body, done) => done(null, { source: body as string }),
    );
    addRoute(
      scope,
      ctx,
      {
        method: 'POST',
        url: '/v1/policies/check',
        access: 'query',
        summary: 'Validate a policy file without applying it: every error with its line and field',
        body: schemas.checkPolicies,
        bodyName: 'CheckPolicies',
        consumes: YAML_TYPES,
        bodyLimit: schemas.MAX_POLICY_SOURCE_BYTES + 4096,
      },
      async (request) => {
        const body = parseInput(schemas.checkPolicies, request.body, 'body');
        return coordinator.checkPolicies(callerOf(request), body.source, body.file ?? 'policies.yaml');
      },
    );
  });
}
