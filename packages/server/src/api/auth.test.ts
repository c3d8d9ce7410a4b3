import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type TestAgent, TOKENS } from '../test-support/api-harness.js';

/** Every route of docs/protocol.md with a plausible body; `:id` is a task held by `agent`. */
const ROUTES: { method: string; url: string; body?: unknown }[] = [
  { method: 'POST', url: '/v1/tasks', body: { type: 't' } },
  { method: 'POST', url: '/v1/tasks/batch', body: { tasks: [{ type: 't' }] } },
  { method: 'GET', url: '/v1/tasks' },
  { method: 'GET', url: '/v1/tasks/:id' },
  { method: 'GET', url: '/v1/tasks/:id/events' },
  { method: 'GET', url: '/v1/tasks/:id/diagnosis' },
  { method: 'GET', url: '/v1/tasks/:id/logs' },
  { method: 'GET', url: '/v1/tasks/:id/result' },
  { method: 'POST', url: '/v1/tasks/:id/cancel', body: {} },
  { method: 'POST', url: '/v1/tasks/:id/retry', body: {} },
  { method: 'POST', url: '/v1/tasks/:id/start', body: { version: 1 } },
  { method: 'POST', url: '/v1/tasks/:id/heartbeat', body: { version: 1 } },
  { method: 'PUT', url: '/v1/tasks/:id/checkpoint', body: { version: 1 } },
  { method: 'POST', url: '/v1/tasks/:id/logs', body: { version: 1, lines: [{ text: 'x' }] } },
  { method: 'PUT', url: '/v1/tasks/:id/result?version=1', body: { big: true } },
  { method: 'POST', url: '/v1/tasks/:id/complete', body: { version: 1 } },
  { method: 'POST', url: '/v1/tasks/:id/fail', body: { version: 1, error: { code: 'x', message: 'y' } } },
  { method: 'POST', url: '/v1/agents', body: { agentType: 'a' } },
  { method: 'GET', url: '/v1/agents' },
  { method: 'GET', url: '/v1/agents/:agentId' },
  { method: 'POST', url: '/v1/agents/:agentId/claim', body: { types: ['t'] } },
  { method: 'POST', url: '/v1/agents/:agentId/heartbeat', body: {} },
  { method: 'DELETE', url: '/v1/agents/:agentId' },
  { method: 'POST', url: '/v1/agents/:agentId/commands', body: { type: 'wake' } },
  { method: 'GET', url: '/v1/dependencies' },
  { method: 'POST', url: '/v1/dependencies/openai/reports', body: { state: 'down' } },
  { method: 'GET', url: '/v1/events' },
  { method: 'GET', url: '/v1/openapi.json' },
  { method: 'GET', url: '/metrics' },
];

const ADMIN_ONLY = new Set([
  'POST /v1/tasks',
  'POST /v1/tasks/batch',
  'POST /v1/tasks/:id/cancel',
  'POST /v1/tasks/:id/retry',
  'POST /v1/agents/:agentId/commands',
  'GET /metrics',
]);

let h: Harness;
let agent: TestAgent;
let taskId: string;
let snapshot: string;

function url(route: { url: string }, agentId = agent.agentId): string {
  return route.url.replace(':id', taskId).replace(':agentId', agentId);
}

async function state(): Promise<string> {
  const tasks = (await h.request('GET', '/v1/tasks')).json().tasks;
  const agents = (await h.request('GET', '/v1/agents')).json().agents;
  const deps = (await h.request('GET', '/v1/dependencies')).json().dependencies;
  return JSON.stringify({
    tasks: tasks.map((t: { id: string; status: string; version: number }) => [t.id, t.status, t.version]),
    agents: agents.map((a: { id: string; status: string }) => [a.id, a.status]),
    deps,
  });
}

beforeAll(async () => {
  h = await createHarness();
  agent = await h.register();
  taskId = (await h.runningTask(agent)).id;
  snapshot = await state();
});
afterAll(async () => {
  await h.close();
});

describe('auth on every route', () => {
  it('needs a token: missing, malformed or unknown → 401 unauthorized', async () => {
    for (const route of ROUTES) {
      for (const token of [null, 'nope-not-a-token', `${TOKENS.admin}x`, 'rsa_unknown-agent-token']) {
        const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
        const res = await h.app.inject({ method: route.method as 'GET', url: url(route), headers });
        expect(res.statusCode, `${route.method} ${route.url} with ${token}`).toBe(401);
        expect(res.json().error.code).toBe('unauthorized');
      }
      const basic = await h.app.inject({
        method: route.method as 'GET',
        url: url(route),
        headers: { authorization: `Basic ${TOKENS.admin}` },
      });
      expect(basic.statusCode, `${route.method} ${route.url} with Basic`).toBe(401);
    }
    expect(await state()).toBe(snapshot);
  });

  it('read-only token: every write is 403', async () => {
    for (const route of ROUTES.filter((r) => r.method !== 'GET')) {
      const res = await h.request(route.method, url(route), { token: TOKENS.readonly, body: route.body });
      expect(res.statusCode, `${route.method} ${route.url}`).toBe(403);
      expect(res.json().error.code).toBe('forbidden');
    }
    expect(await state()).toBe(snapshot);
  });

  it('enrollment token: everything but register is 403', async () => {
    for (const route of ROUTES.filter((r) => !(r.method === 'POST' && r.url === '/v1/agents'))) {
      const res = await h.request(route.method, url(route), { token: TOKENS.enrollment, body: route.body });
      expect(res.statusCode, `${route.method} ${route.url}`).toBe(403);
    }
    expect(await state()).toBe(snapshot);
  });

  it('agent token: admin routes and acting as another agent are 403', async () => {
    const other = await h.register();
    const before = await state();
    for (const route of ROUTES.filter((r) => ADMIN_ONLY.has(`${r.method} ${r.url}`))) {
      const res = await h.request(route.method, url(route), { token: agent.token, body: route.body });
      expect(res.statusCode, `${route.method} ${route.url}`).toBe(403);
    }
    for (const route of ROUTES.filter((r) => r.url.includes(':agentId') && r.method !== 'GET')) {
      const res = await h.request(route.method, url(route, agent.agentId), {
        token: other.token,
        body: route.body,
      });
      expect(res.statusCode, `${route.method} ${route.url} as another agent`).toBe(403);
    }
    // another agent writing to a task it does not hold (right version): the coordinator says 403
    const task = await h.getTask(taskId);
    for (const route of ROUTES.filter((r) =>
      /start|heartbeat|checkpoint|\/logs|result|complete|fail/.test(r.url),
    )) {
      if (route.method === 'GET') continue;
      const body =
        route.body && typeof route.body === 'object' && 'version' in route.body
          ? { ...route.body, version: task.version }
          : route.body;
      const target = url(route).replace('version=1', `version=${task.version}`);
      const res = await h.request(route.method, target, { token: other.token, body });
      expect(res.statusCode, `${route.method} ${route.url} on another agent's task`).toBe(403);
    }
    expect(await state()).toBe(before);
  });

  it('health endpoints need no token', async () => {
    for (const path of ['/healthz', '/readyz']) {
      const res = await h.app.inject({ method: 'GET', url: path });
      expect(res.statusCode, path).toBe(200);
      expect(res.json()).toEqual({ ok: true });
    }
  });
});
