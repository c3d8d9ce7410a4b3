import { afterEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness, TOKENS } from '../test-support/api-harness.js';

const PROTOCOL_ROUTES = [
  'post /v1/tasks',
  'post /v1/tasks/batch',
  'get /v1/tasks',
  'get /v1/tasks/{id}',
  'get /v1/tasks/{id}/events',
  'get /v1/tasks/{id}/diagnosis',
  'get /v1/tasks/{id}/logs',
  'get /v1/tasks/{id}/result',
  'put /v1/tasks/{id}/result',
  'put /v1/tasks/{id}/blobs',
  'get /v1/tasks/{id}/blobs/{blobId}',
  'post /v1/tasks/{id}/cancel',
  'post /v1/tasks/{id}/retry',
  'post /v1/tasks/{id}/start',
  'post /v1/tasks/{id}/heartbeat',
  'put /v1/tasks/{id}/checkpoint',
  'post /v1/tasks/{id}/effects/{key}/claim',
  'put /v1/tasks/{id}/effects/{key}',
  'delete /v1/tasks/{id}/effects/{key}',
  'post /v1/tasks/{id}/logs',
  'post /v1/tasks/{id}/complete',
  'post /v1/tasks/{id}/fail',
  'post /v1/agents',
  'get /v1/agents',
  'get /v1/agents/{agentId}',
  'delete /v1/agents/{agentId}',
  'post /v1/agents/{agentId}/claim',
  'post /v1/agents/{agentId}/heartbeat',
  'post /v1/agents/{agentId}/commands',
  'post /v1/agents/{agentId}/commands/next',
  'post /v1/agents/{agentId}/commands/acks',
  'get /v1/interventions',
  'get /v1/interventions/{id}',
  'get /v1/alerts',
  'get /v1/alerts/{id}',
  'get /v1/agents/{agentId}/diagnosis',
  'get /v1/agents/{agentId}/conditions',
  'put /v1/agents/{agentId}/snapshot',
  'patch /v1/agents/{agentId}/snapshot',
  'get /v1/agents/{agentId}/snapshot',
  'get /v1/policies',
  'post /v1/policies/check',
  'get /v1/dependencies',
  'post /v1/dependencies/{name}/reports',
  'get /v1/events',
  'post /v1/dashboard/login-codes',
  'get /healthz',
  'get /readyz',
  'get /metrics',
  'get /v1/openapi.json',
];

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('GET /v1/openapi.json', () => {
  it('is OpenAPI 3.1 JSON listing every route with its request schema', async () => {
    h = await createHarness();
    const res = await h.request('GET', '/v1/openapi.json', { token: TOKENS.readonly });
    expect(res.statusCode).toBe(200);
    const doc = JSON.parse(res.body);
    expect(doc.openapi).toBe('3.1.0');
    const listed = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`),
    );
    expect(listed.sort()).toEqual([...PROTOCOL_ROUTES].sort());

    const create = doc.paths['/v1/tasks'].post;
    expect(create.requestBody.content['application/json'].schema.$ref).toBe(
      '#/components/schemas/CreateTask',
    );
    expect(doc.components.schemas.CreateTask.required).toEqual(['type']);
    // free-form JSON fields accept any JSON value
    expect(doc.components.schemas.CreateTask.properties.payload).toEqual({ description: 'Any JSON value.' });
    const list = doc.paths['/v1/tasks'].get;
    expect(list.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['status', 'type', 'label', 'limit', 'cursor']),
    );
    // every $ref resolves inside the document
    for (const ref of res.body.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) {
      expect(doc.components.schemas[ref[1] as string], ref[1]).toBeDefined();
    }
    expect(doc.paths['/v1/tasks/{id}/start'].post.requestBody.required).toBe(true);
    // a snapshot patch is a merge patch, named by its media type
    const snapshotPatch = doc.paths['/v1/agents/{agentId}/snapshot'].patch;
    expect(Object.keys(snapshotPatch.requestBody.content)).toEqual(['application/merge-patch+json']);
    expect(snapshotPatch.parameters.map((p: { name: string }) => p.name)).toEqual(['agentId', 'ttlMs']);
    expect(doc.paths['/healthz'].get.security).toBeUndefined();
  });
});

describe('GET /metrics', () => {
  it('needs a token and counts tasks, transitions and requests in Prometheus text', async () => {
    h = await createHarness();
    const agent = await h.register();
    const task = await h.runningTask(agent);
    await h.request('POST', `/v1/tasks/${task.id}/complete`, {
      token: agent.token,
      body: { version: task.version },
    });
    expect((await h.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
    const res = await h.request('GET', '/metrics', { token: TOKENS.readonly });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    expect(res.body).toMatch(/^# TYPE rouse_tasks_created_total counter$/m);
    expect(res.body).toMatch(/^rouse_tasks_created_total 1$/m);
    expect(res.body).toMatch(/^rouse_task_transitions_total\{to="completed"\} 1$/m);
    expect(res.body).toMatch(
      /^rouse_http_requests_total\{method="POST",route="\/v1\/tasks",status="201"\} 1$/m,
    );
    expect(res.body).toMatch(/^rouse_claim_waiters 0$/m);
    for (const line of res.body.trim().split('\n')) {
      expect(line).toMatch(/^(# (HELP|TYPE) \w+ .+|\w+(\{[^}]*\})? -?\d+(\.\d+)?(e[+-]?\d+)?)$/);
    }
  });

  it('is open with metricsPublic', async () => {
    h = await createHarness({ metricsPublic: true });
    const res = await h.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
  });
});
