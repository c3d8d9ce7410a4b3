/**
 * The OpenAPI 3.1 document, built from the route table and the zod request schemas
 * (`z.toJSONSchema`), so it lists exactly the routes the app serves.
 */
import { z } from 'zod';
import type { RouteSpec } from './route-spec.js';

type JsonObject = Record<string, unknown>;

const ERROR_SCHEMA = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', description: 'stable error code (docs/protocol.md "Errors")' },
        message: { type: 'string' },
        details: { type: 'object' },
      },
    },
  },
};

export function buildOpenApiDocument(routes: readonly RouteSpec[], info: { version: string }): JsonObject {
  const schemas = componentSchemas(routes);
  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const route of routes) {
    const path = route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const item = paths[path] ?? {};
    paths[path] = item;
    item[route.method.toLowerCase()] = operation(route, schemas);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Rouse coordinator API',
      version: info.version,
      description: 'Task coordinator and agent watchdog (docs/protocol.md, protocol v1).',
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { Error: ERROR_SCHEMA, ...schemas },
    },
    paths,
  };
}

function operation(route: RouteSpec, schemas: Record<string, JsonObject>): JsonObject {
  const parameters: JsonObject[] = [];
  for (const m of route.url.matchAll(/:([A-Za-z0-9_]+)/g)) {
    parameters.push({ name: m[1], in: 'path', required: true, schema: { type: 'string' } });
  }
  if (route.query && route.queryName) {
    const q = schemas[route.queryName] as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, schema] of Object.entries(q.properties ?? {})) {
      parameters.push({ name, in: 'query', required: q.required?.includes(name) ?? false, schema });
    }
  }
  const op: JsonObject = {
    operationId: operationId(route),
    summary: route.summary,
    'x-rouse-access': route.access,
    parameters,
    responses: {
      [String(route.successStatus ?? 200)]: {
        description: 'success',
        content: Object.fromEntries(['application/json', ...(route.produces ?? [])].map((t) => [t, {}])),
      },
      default: {
        description: 'error',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      },
    },
  };
  if (route.access !== 'public')
    op.security = route.access === 'metrics' ? [{ bearer: [] }, {}] : [{ bearer: [] }];
  if (route.body && route.bodyName) {
    op.requestBody = {
      required: !route.bodyOptional,
      content: {
        [route.bodyMediaType ?? 'application/json']: {
          schema: { $ref: `#/components/schemas/${route.bodyName}` },
        },
      },
    };
  } else if (route.consumes) {
    op.requestBody = {
      required: true,
      content: Object.fromEntries(route.consumes.map((t) => [t, { schema: {} }])),
    };
  }
  return op;
}

function operationId(route: RouteSpec): string {
  const words = route.url
    .replace(/^\/v1\//, '/')
    .split('/')
    .filter(Boolean)
    .map((w) => (w.startsWith(':') ? `by-${w.slice(1)}` : w));
  return [route.method.toLowerCase(), ...words]
    .join('-')
    .replace(/[-_]([a-z])/gi, (_, c: string) => c.toUpperCase())
    .replace(/[^A-Za-z0-9]/g, '');
}

/** Every named body and query schema, with shared definitions hoisted into components. */
function componentSchemas(routes: readonly RouteSpec[]): Record<string, JsonObject> {
  const registry = z.registry<{ id: string }>();
  const seen = new Set<string>();
  for (const r of routes) {
    for (const [schema, id] of [
      [r.body, r.bodyName],
      [r.query, r.queryName],
    ] as const) {
      if (!schema || !id || seen.has(id)) continue;
      seen.add(id);
      registry.add(schema, { id });
    }
  }
  const out = z.toJSONSchema(registry, {
    io: 'input',
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, JsonObject> };
  // zod names shared definitions "__shared#/$defs/<name>"; OpenAPI wants them as plain components.
  const text = JSON.stringify(out.schemas).replaceAll(
    '#/components/schemas/__shared#/$defs/',
    '#/components/schemas/',
  );
  const parsed = JSON.parse(text) as Record<string, JsonObject>;
  const result: Record<string, JsonObject> = {};
  for (const [id, schema] of Object.entries(parsed)) {
    if (id === '__shared') {
      for (const [defId, def] of Object.entries((schema.$defs ?? {}) as Record<string, JsonObject>))
        result[defId] = def;
      continue;
    }
    const { $schema: _s, $id: _i, ...rest } = schema;
    result[id] = rest;
  }
  return result;
}
