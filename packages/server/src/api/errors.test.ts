import fc from 'fast-check';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Coordinator } from '../services/coordinator.js';
import { createHarness, type Harness, type TestAgent, TOKENS } from '../test-support/api-harness.js';
import { buildApp } from './app.js';

let h: Harness;
let agent: TestAgent;
let taskId: string;

beforeAll(async () => {
  h = await createHarness();
  agent = await h.register();
  taskId = (await h.runningTask(agent)).id;
});
afterAll(async () => {
  await h.close();
});

describe('error shape', () => {
  it('unknown routes and methods are 404 not_found in the standard body', async () => {
    for (const [method, path] of [
      ['GET', '/nope'],
      ['GET', '/v1/taskz'],
      ['PATCH', '/v1/tasks'],
      ['DELETE', '/v1/tasks/x'],
    ] as const) {
      const res = await h.request(method, path);
      expect(res.statusCode, `${method} ${path}`).toBe(404);
      expect(res.json()).toEqual({
        error: { code: 'not_found', message: expect.any(String), details: expect.any(Object) },
      });
    }
  });

  it('prototype-poisoning JSON is bad_json', async () => {
    const res = await h.request('POST', '/v1/tasks', {
      payload: '{"type":"x","__proto__":{"admin":true}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('bad_json');
    expect(res.json().error.message).toMatch(/has a "__proto__" key .* rename the key/);
    const nested = await h.request('POST', '/v1/tasks', {
      payload: '{"type":"x","payload":{"constructor":{"prototype":{}}}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(nested.json().error.message).toMatch(/"constructor" with a "prototype" key/);
    const broken = await h.request('POST', '/v1/tasks', {
      payload: '{"type":',
      headers: { 'content-type': 'application/json' },
    });
    expect(broken.json().error).toMatchObject({ code: 'bad_json', message: 'the body is not valid JSON' });
  });

  it('text with a lone surrogate is refused where it is (no store keeps it as sent); pairs and escaped backslashes pass', async () => {
    const post = (payload: string) =>
      h.request('POST', '/v1/tasks', { payload, headers: { 'content-type': 'application/json' } });
    for (const [body, path] of [
      ['{"type":"s","idempotencyKey":"k-\\ud800"}', 'idempotencyKey'],
      ['{"type":"s","payload":{"a":[1,"x\\udc00y"]}}', 'payload.a.1'],
      ['{"type":"s","labels":{"\\udbff":"v"}}', 'labels.\udbff'],
    ] as const) {
      const res = await post(body);
      expect(res.statusCode, body).toBe(400);
      expect(res.json().error).toMatchObject({
        code: 'validation_failed',
        details: { issues: [{ path, code: 'lone_surrogate' }] },
      });
    }
    const pair = await post('{"type":"s","idempotencyKey":"k-\\ud83d\\ude00","payload":"\\\\ud800"}');
    expect(pair.statusCode).toBe(201);
    expect(pair.json().task).toMatchObject({ idempotencyKey: 'k-😀', payload: '\\ud800' });
  });

  it('a GET that takes no query parameters refuses one, naming it (a misspelt filter is not ignored)', async () => {
    for (const path of [
      '/v1/policies?bogus=1',
      '/v1/dependencies?x=1&y=2',
      `/v1/tasks/${taskId}?verbose=1`,
    ]) {
      const res = await h.request('GET', path);
      expect(res.statusCode, path).toBe(400);
      expect(res.json().error.code).toBe('validation_failed');
      expect(res.json().error.message).toMatch(/takes no query parameters \(got (bogus|x, y|verbose)\)/);
    }
    expect((await h.request('GET', '/v1/policies')).statusCode).toBe(200);
  });

  it('an unexpected failure is 500 internal without leaking the cause', async () => {
    const broken: Coordinator = new Proxy(h.coordinator, {
      get(target, prop, receiver) {
        if (prop === 'getTask') return async () => Promise.reject(new Error('secret detail'));
        return Reflect.get(target, prop, receiver);
      },
    });
    const app = buildApp({ coordinator: broken, logger: pino({ level: 'silent' }) });
    try {
      const res = await app.inject({
        method: 'GET',
        url: `/v1/tasks/${taskId}`,
        headers: { authorization: `Bearer ${TOKENS.admin}` },
      });
      expect(res.statusCode).toBe(500);
      expect(res.json().error.code).toBe('internal');
      expect(res.body).not.toContain('secret detail');
    } finally {
      await app.close();
    }
  });

  it('readyz is 503 unavailable when the coordinator cannot reach its store', async () => {
    const down: Coordinator = new Proxy(h.coordinator, {
      get(target, prop, receiver) {
        if (prop === 'ready') return async () => Promise.reject(new Error('SQLITE_CANTOPEN'));
        return Reflect.get(target, prop, receiver);
      },
    });
    const app = buildApp({ coordinator: down, logger: pino({ level: 'silent' }) });
    try {
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json().error.code).toBe('unavailable');
    } finally {
      await app.close();
    }
  });
});

describe('fuzz: junk bodies never produce a 5xx', () => {
  const writeRoutes = [
    'POST /v1/tasks',
    'POST /v1/tasks/batch',
    'POST /v1/tasks/:id/cancel',
    'POST /v1/tasks/:id/retry',
    'POST /v1/tasks/:id/start',
    'POST /v1/tasks/:id/heartbeat',
    'PUT /v1/tasks/:id/checkpoint',
    'POST /v1/tasks/:id/logs',
    'PUT /v1/tasks/:id/result?version=1',
    'POST /v1/tasks/:id/complete',
    'POST /v1/tasks/:id/fail',
    'POST /v1/agents',
    'POST /v1/agents/:agentId/claim',
    'POST /v1/agents/:agentId/heartbeat',
    'POST /v1/agents/:agentId/commands',
    'POST /v1/dependencies/:name/reports',
  ];

  /** Mostly-plausible bodies: right keys with junk values, junk JSON, junk bytes (no waitMs: a valid long-poll would only wait). */
  const keys = ['type', 'payload', 'tasks', 'version', 'types', 'max', 'error', 'lines', 'state', 'status'];
  const junkValue = fc.oneof(fc.jsonValue(), fc.string(), fc.integer(), fc.double(), fc.constant(null));
  const body = fc.oneof(
    fc.dictionary(fc.constantFrom(...keys), junkValue).map((o) => ({ json: o })),
    fc.jsonValue().map((v) => ({ json: v })),
    fc.string().map((s) => ({ raw: s, type: 'application/json' })),
    fc.uint8Array({ maxLength: 64 }).map((b) => ({ raw: Buffer.from(b), type: 'application/octet-stream' })),
  );
  const idLike = fc.oneof(fc.constant('ID'), fc.string({ minLength: 1, maxLength: 80 }));

  for (const route of writeRoutes) {
    it(route, async () => {
      const [method, template] = route.split(' ') as [string, string];
      await fc.assert(
        fc.asyncProperty(body, idLike, fc.boolean(), async (b, id, asAgent) => {
          const pathId = id === 'ID' ? taskId : encodeURIComponent(id);
          const path = template
            .replace(':id', pathId)
            .replace(':agentId', id === 'ID' ? agent.agentId : pathId)
            .replace(':name', id === 'ID' ? 'openai' : pathId);
          const token = asAgent ? agent.token : TOKENS.admin;
          const res =
            'json' in b
              ? await h.request(method, path, { token, body: b.json })
              : await h.request(method, path, { token, payload: b.raw, headers: { 'content-type': b.type } });
          expect(res.statusCode, `${route} → ${res.body}`).toBeLessThan(500);
          expect(res.json().error?.code ?? 'ok').toEqual(expect.any(String));
        }),
        { numRuns: 40 },
      );
    });
  }
});
