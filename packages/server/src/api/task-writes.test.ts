import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type TestAgent, TOKENS } from '../test-support/api-harness.js';

let h: Harness;
let agent: TestAgent;
let other: TestAgent;
beforeEach(async () => {
  h = await createHarness();
  agent = await h.register();
  other = await h.register();
});
afterEach(async () => {
  await h.close();
});

describe('start', () => {
  it('moves claimed → running; a stale version is 409 with currentVersion and status', async () => {
    const created = await h.createTask();
    const claimed = await h.claim(agent);
    expect(claimed.id).toBe(created.id);
    const stale = await h.request('POST', `/v1/tasks/${claimed.id}/start`, {
      token: agent.token,
      body: { version: claimed.version + 5 },
    });
    expect(stale.statusCode).toBe(409);
    expect(stale.json().error).toMatchObject({
      code: 'stale_version',
      details: { currentVersion: claimed.version, status: 'claimed' },
    });
    expect((await h.getTask(claimed.id)).status).toBe('claimed');

    const ok = await h.request('POST', `/v1/tasks/${claimed.id}/start`, {
      token: agent.token,
      body: { version: claimed.version },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().task.status).toBe('running');

    const twice = await h.request('POST', `/v1/tasks/${claimed.id}/start`, {
      token: agent.token,
      body: { version: claimed.version },
    });
    expect(twice.statusCode).toBe(409);
    expect(twice.json().error.code).toBe('invalid_transition');
  });

  it("refuses another agent's token (403) and changes nothing", async () => {
    await h.createTask();
    const claimed = await h.claim(agent);
    const res = await h.request('POST', `/v1/tasks/${claimed.id}/start`, {
      token: other.token,
      body: { version: claimed.version },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('forbidden');
    expect((await h.getTask(claimed.id)).status).toBe('claimed');
  });

  it('answers an unknown task with 404 and a missing version with 400', async () => {
    const missing = await h.request('POST', '/v1/tasks/tsk_nope/start', {
      token: agent.token,
      body: { version: 1 },
    });
    expect(missing.statusCode).toBe(404);
    const noVersion = await h.request('POST', '/v1/tasks/tsk_nope/start', { token: agent.token, body: {} });
    expect(noVersion.statusCode).toBe(400);
    expect(noVersion.json().error.details.issues[0].path).toBe('version');
  });
});

describe('heartbeat', () => {
  it('renews the lease and records progress', async () => {
    const task = await h.runningTask(agent);
    const res = await h.request('POST', `/v1/tasks/${task.id}/heartbeat`, {
      token: agent.token,
      body: { version: task.version, progress: 0.5, phase: 'tests' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ taskId: task.id, ok: true, leaseExpiresAt: expect.any(Number) });
    expect(await h.getTask(task.id)).toMatchObject({ progress: 0.5, phase: 'tests' });
  });

  it('refuses a stale version with 409 and a body over 4 KiB with 413', async () => {
    const task = await h.runningTask(agent);
    const stale = await h.request('POST', `/v1/tasks/${task.id}/heartbeat`, {
      token: agent.token,
      body: { version: task.version - 1, progress: 0.9 },
    });
    expect(stale.statusCode).toBe(409);
    expect(stale.json().error.code).toBe('stale_version');
    const big = await h.request('POST', `/v1/tasks/${task.id}/heartbeat`, {
      token: agent.token,
      body: { version: task.version, phase: 'p'.repeat(5000) },
    });
    expect(big.statusCode).toBe(413);
    expect(big.json().error.details.limitBytes).toBe(4096);
    const bad = await h.request('POST', `/v1/tasks/${task.id}/heartbeat`, {
      token: agent.token,
      body: { version: task.version, progress: 2 },
    });
    expect(bad.statusCode).toBe(400);
    expect((await h.getTask(task.id)).progress).toBeNull();
  });
});

describe('checkpoint', () => {
  it('saves state and session; a stale version changes nothing', async () => {
    const task = await h.runningTask(agent, { resumable: true });
    const ok = await h.request('PUT', `/v1/tasks/${task.id}/checkpoint`, {
      token: agent.token,
      body: { version: task.version, state: { step: 3 }, session: { thread: 'th_1' } },
    });
    expect(ok.statusCode).toBe(200);
    expect(await h.getTask(task.id)).toMatchObject({ checkpoint: { step: 3 }, session: { thread: 'th_1' } });
    const stale = await h.request('PUT', `/v1/tasks/${task.id}/checkpoint`, {
      token: agent.token,
      body: { version: task.version + 1, state: { step: 4 } },
    });
    expect(stale.statusCode).toBe(409);
    expect((await h.getTask(task.id)).checkpoint).toEqual({ step: 3 });
  });
});

describe('logs', () => {
  it('appends lines and reads them back after a sequence number', async () => {
    const task = await h.runningTask(agent);
    const res = await h.request('POST', `/v1/tasks/${task.id}/logs`, {
      token: agent.token,
      body: { version: task.version, lines: [{ text: 'one' }, { stream: 'stderr', text: 'two' }] },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ accepted: 2, truncated: false });
    const all = await h.request('GET', `/v1/tasks/${task.id}/logs`, { token: TOKENS.readonly });
    const lines = all.json().lines;
    expect(lines.map((l: { text: string }) => l.text)).toEqual(['one', 'two']);
    const after = await h.request('GET', `/v1/tasks/${task.id}/logs?after=${lines[0].seq}`);
    expect(after.json().lines.map((l: { text: string }) => l.text)).toEqual(['two']);
    const badQuery = await h.request('GET', `/v1/tasks/${task.id}/logs?after=-1`);
    expect(badQuery.statusCode).toBe(400);
  });

  it('past the 1 MiB cap: lines dropped, one notice line in their place, the page holding it says truncated', async () => {
    const task = await h.runningTask(agent);
    const post = (lines: { stream?: string; text: string }[]) =>
      h.request('POST', `/v1/tasks/${task.id}/logs`, {
        token: agent.token,
        body: { version: task.version, lines },
      });
    const chunk = Array.from({ length: 15 }, (_, i) => ({ text: `${i}`.padEnd(64 * 1024, '.') }));
    expect((await post(chunk)).json()).toEqual({ accepted: 15, truncated: false });
    expect((await post(chunk)).json()).toEqual({ accepted: 1, truncated: true });
    expect((await post([{ text: 'later' }])).json()).toEqual({ accepted: 0, truncated: true });
    const page = (await h.request('GET', `/v1/tasks/${task.id}/logs`)).json();
    expect(page.truncated).toBe(true);
    expect(page.lines).toHaveLength(17);
    expect(page.lines[16]).toMatchObject({
      seq: 17,
      stream: 'rouse',
      text: "[rouse] this task's log reached its cap of 1048576 bytes: later lines were dropped",
    });
    const before = (await h.request('GET', `/v1/tasks/${task.id}/logs?after=17`)).json();
    expect(before).toEqual({ lines: [] });
    // The coordinator's stream is its own.
    const spoof = await post([{ stream: 'rouse', text: 'fake notice' }]);
    expect(spoof.statusCode).toBe(400);
    expect(spoof.json().error.message).toContain('"rouse" is the coordinator\'s own log stream');
  });

  it('refuses empty lines arrays (400) and bodies over 1 MiB (413)', async () => {
    const task = await h.runningTask(agent);
    const empty = await h.request('POST', `/v1/tasks/${task.id}/logs`, {
      token: agent.token,
      body: { version: task.version, lines: [] },
    });
    expect(empty.statusCode).toBe(400);
    const lines = Array.from({ length: 20 }, () => ({ text: 'x'.repeat(60 * 1024) }));
    const big = await h.request('POST', `/v1/tasks/${task.id}/logs`, {
      token: agent.token,
      body: { version: task.version, lines },
    });
    expect(big.statusCode).toBe(413);
    expect(big.json().error.details.limitBytes).toBe(1024 * 1024);
  });

  it('follows as SSE until the task is final', async () => {
    const task = await h.runningTask(agent);
    await h.request('POST', `/v1/tasks/${task.id}/logs`, {
      token: agent.token,
      body: { version: task.version, lines: [{ text: 'hello' }] },
    });
    await h.request('POST', `/v1/tasks/${task.id}/complete`, {
      token: agent.token,
      body: { version: task.version },
    });
    const res = await h.request('GET', `/v1/tasks/${task.id}/logs`, {
      headers: { accept: 'text/event-stream' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/event-stream');
    expect(res.body).toContain('event: log');
    expect(res.body).toContain('"text":"hello"');
    expect(res.body).toContain(': end: task');
  });
});

describe('result upload and download', () => {
  it('stores any content type as a blob and serves it back with that type', async () => {
    const task = await h.runningTask(agent);
    const bytes = Buffer.from('a,b\n1,2\n');
    const put = await h.request('PUT', `/v1/tasks/${task.id}/result?version=${task.version}`, {
      token: agent.token,
      payload: bytes,
      headers: { 'content-type': 'text/csv' },
    });
    expect(put.statusCode).toBe(200);
    expect(put.json().resultRef).toMatchObject({ sizeBytes: bytes.length, contentType: 'text/csv' });
    const done = await h.request('POST', `/v1/tasks/${task.id}/complete`, {
      token: agent.token,
      body: { version: task.version },
    });
    expect(done.statusCode).toBe(200);
    const got = await h.request('GET', `/v1/tasks/${task.id}/result`);
    expect(got.statusCode).toBe(200);
    expect(got.headers['content-type']).toContain('text/csv');
    // Served as stored, never as something a browser guesses or runs.
    expect(got.headers['x-content-type-options']).toBe('nosniff');
    expect(got.headers['content-security-policy']).toBe('sandbox');
    expect(got.rawPayload.equals(bytes)).toBe(true);
  });

  it('refuses uploads over the limit (413), stale versions (409) and a missing version (400)', async () => {
    const small = await createHarness({ limits: { resultUploadBytes: 100 } });
    try {
      const a = await small.register();
      const task = await small.runningTask(a);
      const big = await small.request('PUT', `/v1/tasks/${task.id}/result?version=${task.version}`, {
        token: a.token,
        payload: Buffer.alloc(500, 1),
        headers: { 'content-type': 'application/octet-stream' },
      });
      expect(big.statusCode).toBe(413);
      expect(big.json().error.details.limitBytes).toBe(100);
      expect((await small.getTask(task.id)).resultRef).toBeNull();
      const stale = await small.request('PUT', `/v1/tasks/${task.id}/result?version=${task.version + 1}`, {
        token: a.token,
        payload: 'x',
        headers: { 'content-type': 'text/plain' },
      });
      expect(stale.statusCode).toBe(409);
      const noVersion = await small.request('PUT', `/v1/tasks/${task.id}/result`, {
        token: a.token,
        payload: 'x',
        headers: { 'content-type': 'text/plain' },
      });
      expect(noVersion.statusCode).toBe(400);
      expect(noVersion.json().error.details.issues[0].path).toBe('version');
    } finally {
      await small.close();
    }
  });

  it('serves an inline result as JSON', async () => {
    const task = await h.runningTask(agent);
    await h.request('POST', `/v1/tasks/${task.id}/complete`, {
      token: agent.token,
      body: { version: task.version, result: { answer: 42 } },
    });
    const got = await h.request('GET', `/v1/tasks/${task.id}/result`);
    expect(got.statusCode).toBe(200);
    expect(got.headers['content-type']).toContain('application/json');
    expect(got.json()).toEqual({ answer: 42 });
  });
});

describe('complete and fail', () => {
  it('completes idempotently per version; a stale version is 409 and changes nothing', async () => {
    const task = await h.runningTask(agent);
    const stale = await h.request('POST', `/v1/tasks/${task.id}/complete`, {
      token: agent.token,
      body: { version: task.version - 1, result: 'late' },
    });
    expect(stale.statusCode).toBe(409);
    expect(stale.json().error.details).toMatchObject({ currentVersion: task.version, status: 'running' });
    expect((await h.getTask(task.id)).status).toBe('running');

    const body = { version: task.version, result: { ok: 1 } };
    const first = await h.request('POST', `/v1/tasks/${task.id}/complete`, { token: agent.token, body });
    expect(first.statusCode).toBe(200);
    expect(first.json().task.status).toBe('completed');
    const again = await h.request('POST', `/v1/tasks/${task.id}/complete`, { token: agent.token, body });
    expect(again.statusCode).toBe(200);
    expect(again.json().task.result).toEqual({ ok: 1 });
  });

  it('refuses an inline result over 64 KiB with 413', async () => {
    const task = await h.runningTask(agent);
    const res = await h.request('POST', `/v1/tasks/${task.id}/complete`, {
      token: agent.token,
      body: { version: task.version, result: 'r'.repeat(70 * 1024) },
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.code).toBe('payload_too_large');
    expect((await h.getTask(task.id)).status).toBe('running');
  });

  it("refuses completing another agent's task (403)", async () => {
    const task = await h.runningTask(agent);
    const res = await h.request('POST', `/v1/tasks/${task.id}/complete`, {
      token: other.token,
      body: { version: task.version },
    });
    expect(res.statusCode).toBe(403);
    expect((await h.getTask(task.id)).status).toBe('running');
  });

  it('fails with a retryable error (retried later) and refuses an invalid error object', async () => {
    const task = await h.runningTask(agent);
    const bad = await h.request('POST', `/v1/tasks/${task.id}/fail`, {
      token: agent.token,
      body: { version: task.version, error: { message: 'no code' } },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details.issues[0].path).toBe('error.code');
    const res = await h.request('POST', `/v1/tasks/${task.id}/fail`, {
      token: agent.token,
      body: { version: task.version, error: { code: 'flaky', message: 'try again' } },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().task).toMatchObject({
      status: 'failed',
      final: false,
      nextAttemptAt: expect.any(Number),
    });
  });

  it('refuses completing a task that is only claimed (409 invalid_transition)', async () => {
    await h.createTask();
    const claimed = await h.claim(agent);
    const res = await h.request('POST', `/v1/tasks/${claimed.id}/complete`, {
      token: agent.token,
      body: { version: claimed.version },
    });
    expect(res.statusCode).toBe(409);
    expect(res.json().error.code).toBe('invalid_transition');
    expect((await h.getTask(claimed.id)).status).toBe('claimed');
  });
});
