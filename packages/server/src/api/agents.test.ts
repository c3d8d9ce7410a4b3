import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type TestAgent, TOKENS } from '../test-support/api-harness.js';

let h: Harness;
let agent: TestAgent;
beforeEach(async () => {
  h = await createHarness();
  agent = await h.register(['t']);
});
afterEach(async () => {
  await h.close();
});

describe('POST /v1/agents', () => {
  it('registers with the enrollment token (201) and returns an agent token', async () => {
    const res = await h.request('POST', '/v1/agents', {
      token: TOKENS.enrollment,
      body: { agentType: 'codex', name: 'w1', host: 'h', pid: 1, taskTypes: ['codex'] },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      agent: { agentType: 'codex', name: 'w1', taskTypes: ['codex'] },
      token: expect.any(String),
      heartbeatIntervalMs: expect.any(Number),
    });
  });

  it('rejects a bad agentType and unknown fields (400)', async () => {
    const before = (await h.request('GET', '/v1/agents')).json().agents.length;
    for (const body of [
      { agentType: 'has space' },
      { agentType: 'a', pid: 'x' },
      { agentType: 'a', extra: 1 },
      [],
    ]) {
      const res = await h.request('POST', '/v1/agents', { token: TOKENS.enrollment, body });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
    }
    expect((await h.request('GET', '/v1/agents')).json().agents).toHaveLength(before);
  });
});

describe('POST /v1/agents/{agentId}/claim', () => {
  it('claims immediately when work is there', async () => {
    const task = await h.createTask();
    const res = await h.request('POST', `/v1/agents/${agent.agentId}/claim`, {
      token: agent.token,
      body: { types: ['t'], max: 5 },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().tasks).toEqual([
      expect.objectContaining({ id: task.id, status: 'claimed', version: 1 }),
    ]);
  });

  it('long-polls and is woken by a create', async () => {
    const waiting = h.request('POST', `/v1/agents/${agent.agentId}/claim`, {
      token: agent.token,
      body: { types: ['t'], waitMs: 10_000 },
    });
    await new Promise((r) => setTimeout(r, 50));
    const task = await h.createTask();
    const res = await waiting;
    expect(res.statusCode).toBe(200);
    expect(res.json().tasks[0].id).toBe(task.id);
  });

  it('returns an empty list after waitMs without work', async () => {
    const res = await h.request('POST', `/v1/agents/${agent.agentId}/claim`, {
      token: agent.token,
      body: { types: ['t'], waitMs: 50 },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().tasks).toEqual([]);
  });

  it('claims with start and completes held tasks in the same call', async () => {
    await h.createTask();
    const first = await h.request('POST', `/v1/agents/${agent.agentId}/claim`, {
      token: agent.token,
      body: { types: ['t'], start: true },
    });
    const held = first.json().tasks[0];
    expect(held.status).toBe('running');
    const next = await h.request('POST', `/v1/agents/${agent.agentId}/claim`, {
      token: agent.token,
      body: { types: ['t'], complete: [{ taskId: held.id, version: held.version, result: 1 }] },
    });
    expect(next.statusCode).toBe(200);
    expect(next.json().completed).toEqual([expect.objectContaining({ taskId: held.id, ok: true })]);
    expect((await h.getTask(held.id)).status).toBe('completed');
  });

  it('refuses claiming as another agent (403), bad bodies (400) and unknown agents (404)', async () => {
    const other = await h.register();
    await h.createTask();
    const as = await h.request('POST', `/v1/agents/${other.agentId}/claim`, {
      token: agent.token,
      body: { types: ['t'] },
    });
    expect(as.statusCode).toBe(403);
    for (const body of [{}, { types: [] }, { types: ['t'], max: 0 }, { types: ['t'], waitMs: 1e9 }]) {
      const res = await h.request('POST', `/v1/agents/${agent.agentId}/claim`, { token: agent.token, body });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
    }
    const unknown = await h.request('POST', '/v1/agents/agt_nope/claim', { body: { types: ['t'] } });
    expect(unknown.statusCode).toBe(404);
    const list = (await h.request('GET', '/v1/tasks')).json().tasks;
    expect(list.map((t: { status: string }) => t.status)).toEqual(['created']);
  });
});

describe('POST /v1/agents/{agentId}/heartbeat', () => {
  it('renews held tasks and reports stale ones per task', async () => {
    const task = await h.runningTask(agent);
    const res = await h.request('POST', `/v1/agents/${agent.agentId}/heartbeat`, {
      token: agent.token,
      body: {
        status: 'running',
        metrics: { rssBytes: 1000, cpuPercent: 3 },
        tasks: [
          { taskId: task.id, version: task.version, progress: 0.25 },
          { taskId: task.id, version: task.version + 9 },
        ],
      },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.heartbeatIntervalMs).toEqual(expect.any(Number));
    expect(body.tasks[0]).toMatchObject({ taskId: task.id, ok: true });
    expect(body.tasks[1]).toMatchObject({ taskId: task.id, ok: false, code: 'stale_version' });
    expect(body.commands).toEqual([]);
  });

  it('delivers a cancel command for a cancelled held task', async () => {
    const task = await h.runningTask(agent);
    await h.request('POST', `/v1/tasks/${task.id}/cancel`, { body: { reason: 'stop' } });
    const res = await h.request('POST', `/v1/agents/${agent.agentId}/heartbeat`, {
      token: agent.token,
      body: { tasks: [{ taskId: task.id, version: task.version }] },
    });
    expect(res.json().commands).toEqual([expect.objectContaining({ type: 'cancel', taskId: task.id })]);
  });

  it('refuses bodies over 64 KiB (413) and bad statuses (400)', async () => {
    const tasks = Array.from({ length: 600 }, (_, i) => ({
      taskId: `tsk_${i}`,
      version: 1,
      phase: 'p'.repeat(100),
    }));
    const big = await h.request('POST', `/v1/agents/${agent.agentId}/heartbeat`, {
      token: agent.token,
      body: { tasks },
    });
    expect(big.statusCode).toBe(413);
    expect(big.json().error.details.limitBytes).toBe(64 * 1024);
    const bad = await h.request('POST', `/v1/agents/${agent.agentId}/heartbeat`, {
      token: agent.token,
      body: { status: 'sleepy' },
    });
    expect(bad.statusCode).toBe(400);
  });
});

describe('agent reads, leave and commands', () => {
  it('lists and gets agents; 404 for an unknown one', async () => {
    const list = await h.request('GET', '/v1/agents', { token: TOKENS.readonly });
    expect(list.statusCode).toBe(200);
    expect(list.json().agents.map((a: { id: string }) => a.id)).toContain(agent.agentId);
    const one = await h.request('GET', `/v1/agents/${agent.agentId}`, { token: agent.token });
    expect(one.json().agent.id).toBe(agent.agentId);
    const unknown = await h.request('GET', '/v1/agents/agt_nope');
    expect(unknown.statusCode).toBe(404);
  });

  it('leave times out held tasks at once', async () => {
    const task = await h.runningTask(agent);
    const res = await h.request('DELETE', `/v1/agents/${agent.agentId}`, { token: agent.token });
    expect(res.statusCode).toBe(200);
    expect((await h.getTask(task.id)).status).toBe('timeout');
    const other = await h.register();
    const asOther = await h.request('DELETE', `/v1/agents/${agent.agentId}`, { token: other.token });
    expect(asOther.statusCode).toBe(403);
  });

  it('queues a command (admin only) delivered on the next heartbeat', async () => {
    const denied = await h.request('POST', `/v1/agents/${agent.agentId}/commands`, {
      token: agent.token,
      body: { type: 'wake' },
    });
    expect(denied.statusCode).toBe(403);
    const bad = await h.request('POST', `/v1/agents/${agent.agentId}/commands`, { body: { type: 'dance' } });
    expect(bad.statusCode).toBe(400);
    const res = await h.request('POST', `/v1/agents/${agent.agentId}/commands`, {
      body: { type: 'wake', reason: 'hi' },
    });
    expect(res.statusCode).toBe(202);
    const beat = await h.request('POST', `/v1/agents/${agent.agentId}/heartbeat`, {
      token: agent.token,
      body: {},
    });
    expect(beat.json().commands).toEqual([expect.objectContaining({ type: 'wake' })]);
    const unknown = await h.request('POST', '/v1/agents/agt_nope/commands', { body: { type: 'wake' } });
    expect(unknown.statusCode).toBe(404);
  });

  it('a long-poll for commands answers as soon as one is queued, once; empty when the wait ends', async () => {
    const url = `/v1/agents/${agent.agentId}/commands/next`;
    const other = await h.register();
    expect((await h.request('POST', url, { token: other.token, body: {} })).statusCode).toBe(403);
    expect((await h.request('POST', url, { token: agent.token, body: { waitMs: 60_001 } })).statusCode).toBe(
      400,
    );
    expect((await h.request('POST', url, { token: agent.token, body: {} })).json()).toEqual({ commands: [] });
    const started = performance.now();
    const waiting = h.request('POST', url, { token: agent.token, body: { waitMs: 30_000 } });
    await new Promise((r) => setTimeout(r, 50));
    await h.request('POST', `/v1/agents/${agent.agentId}/commands`, {
      body: { type: 'terminate', graceMs: 2000, reason: 'hung' },
    });
    const got = await waiting;
    expect(got.statusCode).toBe(200);
    expect(got.json().commands).toEqual([
      expect.objectContaining({ type: 'terminate', graceMs: 2000, id: expect.stringMatching(/^cmd_/) }),
    ]);
    // Answered when the command came, not at the end of the wait.
    expect(performance.now() - started).toBeLessThan(20_000);
    // Taken once: the heartbeat does not get it again.
    const beat = await h.request('POST', `/v1/agents/${agent.agentId}/heartbeat`, {
      token: agent.token,
      body: {},
    });
    expect(beat.json().commands).toEqual([]);
    const empty = await h.request('POST', url, { token: agent.token, body: { waitMs: 100 } });
    expect(empty.json()).toEqual({ commands: [] });
  });

  it('commands/acks records answers at once, without a heartbeat: the manual intervention ends', async () => {
    const url = `/v1/agents/${agent.agentId}/commands/acks`;
    const sent = await h.request('POST', `/v1/agents/${agent.agentId}/commands`, {
      body: { type: 'wake', reason: 'quiet' },
    });
    expect(sent.statusCode).toBe(202);
    const { commandId, intervention } = sent.json() as { commandId: string; intervention: { id: string } };
    const taken = await h.request('POST', `/v1/agents/${agent.agentId}/commands/next`, {
      token: agent.token,
      body: {},
    });
    expect(taken.json().commands).toEqual([expect.objectContaining({ id: commandId, type: 'wake' })]);
    const ack = { commandId, outcome: 'done', message: 'woke up' };
    // Only the agent itself answers, with a body that is a list of answers.
    const other = await h.register();
    expect((await h.request('POST', url, { token: other.token, body: { acks: [ack] } })).statusCode).toBe(
      403,
    );
    expect((await h.request('POST', url, { token: agent.token, body: { acks: [] } })).json().error.code).toBe(
      'validation_failed',
    );
    expect(
      (await h.request('POST', url, { token: agent.token, body: { acks: [{ ...ack, outcome: 'maybe' }] } }))
        .statusCode,
    ).toBe(400);
    const answered = await h.request('POST', url, {
      token: agent.token,
      body: { acks: [ack, { commandId: 'cmd_nobody_sent_this', outcome: 'done' }] },
    });
    expect(answered.statusCode).toBe(200);
    expect(answered.json()).toEqual({ recorded: 1 });
    const after = await h.request('GET', `/v1/interventions/${intervention.id}`);
    expect(after.json().intervention).toMatchObject({ state: 'succeeded', reason: 'woke up' });
    // Answered once: the same answer again finds nothing open.
    expect((await h.request('POST', url, { token: agent.token, body: { acks: [ack] } })).json()).toEqual({
      recorded: 0,
    });
  });
});

describe('dependencies', () => {
  it('records reports and lists them', async () => {
    const res = await h.request('POST', '/v1/dependencies/openai/reports', {
      token: agent.token,
      body: { state: 'rate_limited', retryAfterMs: 20_000, message: '429' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().dependency).toMatchObject({ name: 'openai', state: 'rate_limited' });
    const list = await h.request('GET', '/v1/dependencies', { token: TOKENS.readonly });
    expect(list.json().dependencies).toEqual([
      expect.objectContaining({ name: 'openai', state: 'rate_limited' }),
    ]);
  });

  it('rejects bad states, bad names and read-only tokens', async () => {
    const bad = await h.request('POST', '/v1/dependencies/openai/reports', { body: { state: 'meh' } });
    expect(bad.statusCode).toBe(400);
    const badName = await h.request('POST', '/v1/dependencies/bad%20name/reports', { body: { state: 'up' } });
    expect(badName.statusCode).toBe(400);
    expect(badName.json().error.details.issues[0].path).toBe('name');
    const ro = await h.request('POST', '/v1/dependencies/openai/reports', {
      token: TOKENS.readonly,
      body: { state: 'up' },
    });
    expect(ro.statusCode).toBe(403);
    expect((await h.request('GET', '/v1/dependencies')).json().dependencies).toEqual([]);
  });
});
