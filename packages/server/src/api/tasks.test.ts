import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness, TOKENS } from '../test-support/api-harness.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

describe('POST /v1/tasks', () => {
  it('creates a task (201) and deduplicates by idempotencyKey (200)', async () => {
    const body = { type: 'codex', payload: { prompt: 'hi' }, idempotencyKey: 'k1', labels: { repo: 'a/b' } };
    const first = await h.request('POST', '/v1/tasks', { body });
    expect(first.statusCode).toBe(201);
    const task = first.json().task;
    expect(task).toMatchObject({
      type: 'codex',
      status: 'created',
      payload: { prompt: 'hi' },
      labels: { repo: 'a/b' },
    });
    expect(first.json().deduplicated).toBeUndefined();

    const again = await h.request('POST', '/v1/tasks', { body });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ task: { id: task.id }, deduplicated: true });

    const conflict = await h.request('POST', '/v1/tasks', {
      body: { ...body, payload: { prompt: 'other' } },
    });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json().error.code).toBe('idempotency_conflict');
  });

  it('rejects wrong types and unknown fields with validation_failed naming the field', async () => {
    const wrong = await h.request('POST', '/v1/tasks', { body: { type: 42 } });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().error.code).toBe('validation_failed');
    expect(wrong.json().error.details.issues[0].path).toBe('type');

    const unknown = await h.request('POST', '/v1/tasks', { body: { type: 'x', colour: 'red' } });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.details.issues).toEqual([expect.objectContaining({ path: 'colour' })]);

    const nested = await h.request('POST', '/v1/tasks', {
      body: { type: 'x', timing: { heartbeatIntervalMs: -5 } },
    });
    expect(nested.statusCode).toBe(400);
    expect(nested.json().error.details.issues[0].path).toBe('timing.heartbeatIntervalMs');

    const list = await h.request('GET', '/v1/tasks');
    expect(list.json().tasks).toHaveLength(0);
  });

  it('rejects bad timing combinations from the core as 400, not 500', async () => {
    const res = await h.request('POST', '/v1/tasks', {
      body: { type: 'x', timing: { heartbeatIntervalMs: 5000, heartbeatTimeoutMs: 1000 } },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('validation_failed');
  });

  it('answers malformed JSON with bad_json and an empty body with validation_failed', async () => {
    const bad = await h.request('POST', '/v1/tasks', {
      payload: '{"type": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('bad_json');
    const empty = await h.request('POST', '/v1/tasks', {
      payload: '',
      headers: { 'content-type': 'application/json' },
    });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().error.code).toBe('validation_failed');
  });

  it('refuses bodies over 1 MiB with 413 and limitBytes', async () => {
    const res = await h.request('POST', '/v1/tasks', {
      body: { type: 'x', payload: 'a'.repeat(1024 * 1024 + 10) },
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().error).toMatchObject({
      code: 'payload_too_large',
      details: { limitBytes: 1024 * 1024 },
    });
  });

  it('refuses non-JSON content types with 415', async () => {
    const res = await h.request('POST', '/v1/tasks', {
      payload: 'type=x',
      headers: { 'content-type': 'text/plain' },
    });
    expect(res.statusCode).toBe(415);
    expect(res.json().error.code).toBe('unsupported_media_type');
  });
});

describe('POST /v1/tasks: requires', () => {
  it('names each dependency once', async () => {
    const res = await h.request('POST', '/v1/tasks', { body: { type: 'r', requires: ['openai', 'openai'] } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details.issues[0]).toMatchObject({
      path: 'requires',
      message: 'names a dependency twice',
    });
  });
});

describe('POST /v1/tasks/batch', () => {
  it('creates all tasks (201)', async () => {
    const res = await h.request('POST', '/v1/tasks/batch', {
      body: { tasks: [{ type: 'a' }, { type: 'b' }] },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().tasks.map((t: { type: string }) => t.type)).toEqual(['a', 'b']);
  });

  it('answers a long batch (its reply sliced by the serializer) with every task, in order, as exact JSON', async () => {
    const tasks = Array.from({ length: 300 }, (_, i) => ({ type: 'a', payload: { i, text: 'é ☃ 😀' } }));
    const res = await h.request('POST', '/v1/tasks/batch', { body: { tasks } });
    expect(res.statusCode).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
    const created = res.json().tasks as { id: string; payload: { i: number; text: string } }[];
    expect(created.map((t) => t.payload)).toEqual(tasks.map((t) => t.payload));
    const listed = (await h.request('GET', '/v1/tasks?limit=300')).json().tasks as { id: string }[];
    expect(new Set(listed.map((t) => t.id))).toEqual(new Set(created.map((t) => t.id)));
  });

  it('is all or nothing: one bad entry creates nothing', async () => {
    const res = await h.request('POST', '/v1/tasks/batch', {
      body: { tasks: [{ type: 'a' }, { type: '' }] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details.issues[0].path).toBe('tasks.1.type');
    expect((await h.request('GET', '/v1/tasks')).json().tasks).toHaveLength(0);
  });

  it('one key twice in a batch: the same task is created once; two different tasks are a conflict naming both entries', async () => {
    const same = await h.request('POST', '/v1/tasks/batch', {
      body: {
        tasks: [
          { type: 'i', idempotencyKey: 'K', payload: { a: 1, b: 2 } },
          { type: 'i', idempotencyKey: 'K', payload: { b: 2, a: 1 } },
        ],
      },
    });
    expect(same.statusCode).toBe(201);
    const [one, two] = same.json().tasks as { id: string }[];
    expect(two!.id).toBe(one!.id);
    const res = await h.request('POST', '/v1/tasks/batch', {
      body: {
        tasks: [
          { type: 'j' },
          { type: 'i', idempotencyKey: 'L', payload: 1 },
          { type: 'i', idempotencyKey: 'L', payload: 2 },
        ],
      },
    });
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toMatchObject({
      code: 'idempotency_conflict',
      details: { idempotencyKey: 'L', index: 2, firstIndex: 1 },
    });
    expect(res.json().error.details.taskId).toBeUndefined();
    expect(res.json().error.message).toContain('tasks[2].idempotencyKey "L" repeats tasks[1]\'s');
    expect((await h.request('GET', '/v1/tasks')).json().tasks).toHaveLength(1);
  });

  it('accepts more than 1 MiB (batch limit 16 MiB) and refuses beyond its limit', async () => {
    const big = Array.from({ length: 20 }, () => ({ type: 'a', payload: 'x'.repeat(64 * 1024) }));
    const ok = await h.request('POST', '/v1/tasks/batch', { body: { tasks: big } });
    expect(ok.statusCode).toBe(201);
    const small = await createHarness({ limits: { batchBodyBytes: 1000 } });
    try {
      const res = await small.request('POST', '/v1/tasks/batch', { body: { tasks: big } });
      expect(res.statusCode).toBe(413);
      expect(res.json().error.details.limitBytes).toBe(1000);
    } finally {
      await small.close();
    }
  });
});

describe('GET /v1/tasks', () => {
  it('filters by status, type and label and pages with a cursor', async () => {
    await h.createTask({ type: 'a', labels: { team: 'x' } });
    await h.createTask({ type: 'a', labels: { team: 'y' } });
    await h.createTask({ type: 'b' });
    const byType = await h.request('GET', '/v1/tasks?type=a');
    expect(byType.json().tasks).toHaveLength(2);
    const byLabel = await h.request('GET', '/v1/tasks?label=team:y');
    expect(byLabel.json().tasks).toHaveLength(1);
    const byStatus = await h.request('GET', '/v1/tasks?status=created,running');
    expect(byStatus.json().tasks).toHaveLength(3);
    const page1 = await h.request('GET', '/v1/tasks?limit=2');
    expect(page1.json().tasks).toHaveLength(2);
    const cursor = page1.json().nextCursor;
    expect(typeof cursor).toBe('string');
    const page2 = await h.request('GET', `/v1/tasks?limit=2&cursor=${encodeURIComponent(cursor)}`);
    expect(page2.json().tasks).toHaveLength(1);
  });

  it('rejects bad queries with 400 naming the parameter', async () => {
    for (const q of ['status=bogus', 'limit=0', 'limit=abc', 'label=nocolon', 'whatever=1']) {
      const res = await h.request('GET', `/v1/tasks?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().error.code, q).toBe('validation_failed');
    }
  });
});

describe('task reads', () => {
  it('gets a task, its events and its diagnosis', async () => {
    const task = await h.createTask();
    const got = await h.request('GET', `/v1/tasks/${task.id}`, { token: TOKENS.readonly });
    expect(got.statusCode).toBe(200);
    expect(got.json().task.id).toBe(task.id);
    const events = await h.request('GET', `/v1/tasks/${task.id}/events`, { token: TOKENS.readonly });
    expect(events.statusCode).toBe(200);
    expect(events.json().events[0]).toMatchObject({ to: 'created' });
    const diagnosis = await h.request('GET', `/v1/tasks/${task.id}/diagnosis`, { token: TOKENS.readonly });
    expect(diagnosis.statusCode).toBe(200);
    expect(diagnosis.json()).toMatchObject({ status: 'created', summary: expect.any(String) });
    expect(diagnosis.json().reasons.map((r: { code: string }) => r.code)).toContain('no_agents_for_type');
  });

  it('answers unknown ids with 404 not_found on every read', async () => {
    for (const path of ['', '/events', '/diagnosis', '/logs', '/result']) {
      const res = await h.request('GET', `/v1/tasks/tsk_nope${path}`);
      expect(res.statusCode, path).toBe(404);
      expect(res.json().error.code, path).toBe('not_found');
    }
  });
});

describe('cancel and retry', () => {
  it('cancels a task (with or without a body) and refuses to cancel it twice (409)', async () => {
    const a = await h.createTask();
    const res = await h.request('POST', `/v1/tasks/${a.id}/cancel`, { body: { reason: 'not needed' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().task.status).toBe('cancelled');
    const again = await h.request('POST', `/v1/tasks/${a.id}/cancel`);
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toMatchObject({ code: 'invalid_transition', details: { from: 'cancelled' } });

    const b = await h.createTask();
    const noBody = await h.request('POST', `/v1/tasks/${b.id}/cancel`);
    expect(noBody.statusCode).toBe(200);
    const bad = await h.request('POST', `/v1/tasks/${b.id}/cancel`, { body: { reason: 7 } });
    expect(bad.statusCode).toBe(400);
  });

  it('retries a final failed task and refuses a task that is not final (409)', async () => {
    const agent = await h.register();
    const running = await h.runningTask(agent);
    const failed = await h.request('POST', `/v1/tasks/${running.id}/fail`, {
      token: agent.token,
      body: { version: running.version, error: { code: 'boom', message: 'no', retryable: false } },
    });
    expect(failed.json().task).toMatchObject({ status: 'failed', final: true });
    const retried = await h.request('POST', `/v1/tasks/${running.id}/retry`);
    expect(retried.statusCode).toBe(200);
    expect(retried.json().task.final).toBe(false);

    const fresh = await h.createTask();
    const refused = await h.request('POST', `/v1/tasks/${fresh.id}/retry`, { body: {} });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.message).toBe(
      `task ${fresh.id} cannot be retried: it is created; only a final failed or timeout task can be retried by hand`,
    );
    expect((await h.getTask(fresh.id)).status).toBe('created');
    const unknownField = await h.request('POST', `/v1/tasks/${fresh.id}/retry`, { body: { now: true } });
    expect(unknownField.statusCode).toBe(400);
    const missing = await h.request('POST', '/v1/tasks/tsk_nope/retry');
    expect(missing.statusCode).toBe(404);
  });
});
