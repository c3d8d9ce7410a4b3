/**
 * A batch create through the SDK against a real `rouse serve`: the SDK asks for the minimal answer and
 * rebuilds every task from its own request, so what it returns must be exactly what the coordinator
 * stored — whatever the request left to the type's policy, its own timing, an idempotency key that
 * matched, a payload that JSON changes — over the call stream and over HTTP alike.
 */
import { Client, type CreateTaskRequest } from '@rouse/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CoordinatorProcess, startCoordinatorProcess } from '../harness/coordinator-process.js';
import { writePolicyFile } from '../harness/policy-file.js';

const POLICIES = `
task_types:
  report:
    expected_duration: { min: 2m, max: 20m }
    max_attempts: 3
    backoff: { base: 2s, cap: 1m, jitter: 0.1 }
  review:
    heartbeat_interval: 2s
    execution_timeout: 30m
`;

let coord: CoordinatorProcess;
let admin: Client;
let overHttp: Client;
beforeAll(async () => {
  coord = await startCoordinatorProcess({ extraArgs: ['--policies', writePolicyFile(POLICIES)] });
  admin = new Client({ url: coord.url, token: coord.adminToken });
  overHttp = new Client({ url: coord.url, token: coord.adminToken, callStream: false });
});
afterAll(async () => {
  admin.close();
  overHttp.close();
  await coord.kill();
});

/** Requests that leave different things to the coordinator, and payloads JSON does not keep as given. */
function requests(tag: string): CreateTaskRequest[] {
  return [
    { type: 'report', payload: { n: 1 } },
    { type: 'report', payload: { n: 2 }, timing: { heartbeatIntervalMs: 1000 } },
    { type: 'report', payload: { n: 3 }, maxAttempts: 7 },
    { type: 'review' },
    { type: 'review', timing: { expectedDurationMs: { min: 10_000, max: 60_000 } }, priority: -5 },
    { type: 'plain', payload: null, labels: { repo: 'a/b', tag }, requires: ['openai'], resumable: true },
    { type: 'plain', runAt: Date.now() + 3_600_000, idempotencyKey: `${tag}-later` },
    { type: 'plain', idempotencyKey: `${tag}-twice`, payload: { same: true } },
    { type: 'plain', idempotencyKey: `${tag}-twice`, payload: { same: true } },
    {
      type: 'plain',
      payload: {
        at: new Date(0),
        gone: undefined,
        list: [undefined, Number.NaN, 'é ☃ 😀'],
        nested: { deep: [{ x: 1 }] },
      } as unknown as CreateTaskRequest['payload'],
    },
  ];
}

describe('batch create through the SDK (minimal answer)', () => {
  it.each([
    ['the call stream', () => admin],
    ['HTTP', () => overHttp],
  ])('returns over %s exactly the tasks the coordinator stored', async (_, client) => {
    const tag = `t${Math.random().toString(36).slice(2)}`;
    const created = await client().createTasks(requests(tag));
    expect(created).toHaveLength(10);
    for (const task of created) expect(task).toEqual(await admin.getTask(task.id));
    // What the rebuild had to take from the coordinator, and from JSON.
    expect(created[0]).toMatchObject({
      maxAttempts: 3,
      timing: { backoff: { baseMs: 2000, capMs: 60_000 } },
    });
    expect(created[1]!.timing.heartbeatIntervalMs).toBe(1000);
    expect(created[2]!.maxAttempts).toBe(7);
    expect(created[4]!.timing.executionTimeoutMs).toBe(90_000); // from its expected duration, not the type's 30m
    expect(created[8]!.id).toBe(created[7]!.id);
    expect(created[9]!.payload).toEqual({
      at: '1970-01-01T00:00:00.000Z',
      list: [null, null, 'é ☃ 😀'],
      nested: { deep: [{ x: 1 }] },
    });
  });

  it('returns a task an idempotency key matched as it is now, not as new', async () => {
    const [first] = await admin.createTasks([{ type: 'plain', idempotencyKey: 'matched', payload: 1 }]);
    await admin.cancelTask(first!.id, 'to change its state');
    const [again, fresh] = await admin.createTasks([
      { type: 'plain', idempotencyKey: 'matched', payload: 1 },
      { type: 'plain', payload: 2 },
    ]);
    expect(again).toEqual(await admin.getTask(first!.id));
    expect(again!.status).toBe('cancelled');
    expect(fresh).toEqual(await admin.getTask(fresh!.id));
  });

  it('answers the raw request with full tasks unless it asks for the minimal answer', async () => {
    const post = async (body: unknown) => {
      const res = await fetch(`${coord.url}/v1/tasks/batch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${coord.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const full = await post({ tasks: [{ type: 'report' }] });
    expect(full.status).toBe(201);
    expect(Object.keys(full.body)).toEqual(['tasks']);
    expect((full.body.tasks as object[])[0]).toMatchObject({ status: 'created', payload: null });

    const minimal = await post({ tasks: [{ type: 'report' }, { type: 'report' }], return: 'minimal' });
    expect(minimal.status).toBe(201);
    const [a, b] = minimal.body.tasks as Record<string, unknown>[];
    expect(Object.keys(a!)).toEqual(['id', 'createdAt', 'runAt']);
    expect(Object.keys(b!)).toEqual(['id', 'createdAt', 'runAt']);
    expect(minimal.body.types).toEqual({
      report: { maxAttempts: 3, timing: expect.objectContaining({ backoff: expect.any(Object) }) },
    });

    const bad = await post({ tasks: [{ type: 'report' }], return: 'ids' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({
      error: { code: 'validation_failed', details: { issues: [{ path: 'return' }] } },
    });
  });

  it('rebuilds a batch too large for the call stream, sent over HTTP', async () => {
    const reqs = Array.from({ length: 600 }, (_, i) => ({
      type: i % 2 ? 'report' : 'plain',
      payload: { i, pad: 'x'.repeat(120) },
    }));
    const created = await admin.createTasks(reqs);
    expect(created.map((t) => t.payload)).toEqual(reqs.map((r) => r.payload));
    const stored = await admin.listTasks({ limit: 1000 });
    const byId = new Map(stored.tasks.map((t) => [t.id, t]));
    for (const task of created) expect(task).toEqual(byId.get(task.id));
  });
});
