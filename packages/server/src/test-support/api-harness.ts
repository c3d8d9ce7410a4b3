/**
 * Test support for the API tests (not a test itself): a real SQLite store (`:memory:`), a real
 * coordinator and the app, driven in-process with `app.inject`. Each harness has its own temp dir.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Task } from '@rouse/protocol';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../api/app.js';
import type { ApiLimits } from '../api/limits.js';
import type { Alerts } from '../services/alerts/alerts.js';
import type { Coordinator } from '../services/coordinator.js';
import { createCoordinator } from '../services/create-coordinator.js';
import type { PolicyProvider } from '../services/policy-registry.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store } from '../store/store.js';
import { systemClock } from '../system-clock.js';

export const TOKENS = {
  admin: 'rsk_admin_test-admin-token-0123456789',
  enrollment: 'rsk_enroll_test-enroll-token-0123456789',
  readonly: 'rsk_read_test-read-token-0123456789',
} as const;

export interface RequestOptions {
  /** Bearer token; null sends none. @default the admin token */
  token?: string | null;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as is (with `headers['content-type']`). */
  payload?: string | Buffer;
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

export interface TestAgent {
  agentId: string;
  token: string;
}

export interface Harness {
  app: FastifyInstance;
  coordinator: Coordinator;
  /** The coordinator's alerts (raise and clear them as the watchdog would). */
  alerts: Alerts;
  store: Store;
  dir: string;
  request(method: string, url: string, options?: RequestOptions): Promise<LightMyRequestResponse>;
  register(taskTypes?: string[]): Promise<TestAgent>;
  createTask(body?: Record<string, unknown>): Promise<Task>;
  claim(agent: TestAgent, types?: string[]): Promise<Task>;
  /** A task claimed by `agent` and started (status running). */
  runningTask(agent: TestAgent, body?: Record<string, unknown>): Promise<Task>;
  getTask(id: string): Promise<Task>;
  close(): Promise<void>;
}

export async function createHarness(
  options: { limits?: ApiLimits; metricsPublic?: boolean; policies?: PolicyProvider } = {},
): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'rouse-api-'));
  const clock = systemClock();
  const logger = pino({ level: 'silent' });
  const store = createSqliteStore({ path: ':memory:', clock });
  const coordinator = createCoordinator({
    store,
    clock,
    logger,
    blobDir: join(dir, 'blobs'),
    tokens: { ...TOKENS },
    ...(options.policies ? { policies: options.policies } : {}),
  });
  await coordinator.start();
  const app = buildApp({
    coordinator,
    logger,
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.metricsPublic ? { metricsPublic: true } : {}),
  });
  await app.ready();

  const request: Harness['request'] = (method, url, o = {}) => {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    const token = o.token === undefined ? TOKENS.admin : o.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let payload: string | Buffer | undefined = o.payload;
    if (o.body !== undefined) {
      payload = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    return app.inject({
      method: method as 'GET',
      url,
      headers,
      ...(payload === undefined ? {} : { payload }),
      ...(o.query ? { query: o.query } : {}),
    });
  };

  const expectOk = (res: LightMyRequestResponse, what: string) => {
    if (res.statusCode >= 300) throw new Error(`${what} failed: ${res.statusCode} ${res.body}`);
    return res.json();
  };

  const h: Harness = {
    app,
    coordinator,
    alerts: coordinator.alerts,
    store,
    dir,
    request,
    async register(taskTypes = ['t']) {
      const res = await request('POST', '/v1/agents', {
        token: TOKENS.enrollment,
        body: { agentType: 'test', name: 'worker', taskTypes },
      });
      const body = expectOk(res, 'register');
      return { agentId: body.agent.id, token: body.token };
    },
    async createTask(body = {}) {
      return expectOk(
        await request('POST', '/v1/tasks', { body: { type: 't', payload: { n: 1 }, ...body } }),
        'create',
      ).task;
    },
    async claim(agent, types = ['t']) {
      const res = await request('POST', `/v1/agents/${agent.agentId}/claim`, {
        token: agent.token,
        body: { types, max: 1 },
      });
      const task = expectOk(res, 'claim').tasks[0];
      if (!task) throw new Error('claim returned no task');
      return task;
    },
    async runningTask(agent, body = {}) {
      const created = await h.createTask(body);
      const claimed = await h.claim(agent, [created.type]);
      if (claimed.id !== created.id) throw new Error('claimed an unexpected task');
      const res = await request('POST', `/v1/tasks/${claimed.id}/start`, {
        token: agent.token,
        body: { version: claimed.version },
      });
      return expectOk(res, 'start').task;
    },
    async getTask(id) {
      return expectOk(await request('GET', `/v1/tasks/${id}`), 'get').task;
    },
    async close() {
      const closed = app.close();
      await coordinator.stop();
      await closed;
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return h;
}
