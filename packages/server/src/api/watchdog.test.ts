/**
 * The watchdog's HTTP surface: what an agent may say of itself, keys and incarnations, the agent
 * diagnosis and conditions, the agent list by status, the policies and their check, and the metrics.
 */
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

const heartbeat = (a: TestAgent, body: unknown) =>
  h.request('POST', `/v1/agents/${a.agentId}/heartbeat`, { token: a.token, body });

describe('agent status', () => {
  it('an agent may report idle, running, error and terminating, never a status the coordinator derives', async () => {
    for (const status of ['idle', 'running', 'error', 'terminating']) {
      expect((await heartbeat(agent, { status })).statusCode, status).toBe(200);
    }
    for (const status of ['lost', 'left', 'stalled', 'terminated', 'at_risk', 'sleeping']) {
      const res = await heartbeat(agent, { status });
      expect(res.statusCode, status).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'validation_failed' });
      expect(res.json().error.message).toContain('status');
    }
    const a = (await h.request('GET', `/v1/agents/${agent.agentId}`)).json().agent;
    expect(a).toMatchObject({ status: 'terminating', reportedStatus: 'terminating' });
  });

  it('metadata is bounded, and statusMessage travels with the status', async () => {
    const big = { notes: 'x'.repeat(3000) };
    const res = await heartbeat(agent, { metadata: big });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toContain('2048');
    expect((await heartbeat(agent, { status: 'error', statusMessage: 'quota exceeded' })).statusCode).toBe(
      200,
    );
    const a = (await h.request('GET', `/v1/agents/${agent.agentId}`)).json().agent;
    expect(a).toMatchObject({ status: 'error', statusMessage: 'quota exceeded' });
  });
});

describe('keys and incarnations', () => {
  it('registering again with the same key answers the same id, incarnation 2; the old token is refused', async () => {
    const register = () =>
      h.request('POST', '/v1/agents', {
        token: TOKENS.enrollment,
        body: { agentType: 'reviewer', key: 'host-3/reviewer-1', taskTypes: ['t'] },
      });
    const first = (await register()).json();
    const second = (await register()).json();
    expect(first).toMatchObject({ incarnation: 1, agent: { key: 'host-3/reviewer-1', incarnation: 1 } });
    expect(second).toMatchObject({ incarnation: 2, agent: { id: first.agent.id, incarnation: 2 } });
    const old = await h.request('POST', `/v1/agents/${first.agent.id}/heartbeat`, {
      token: first.token,
      body: {},
    });
    expect(old.statusCode).toBe(401);
    const fresh = await h.request('POST', `/v1/agents/${first.agent.id}/heartbeat`, {
      token: second.token,
      body: { status: 'running' },
    });
    expect(fresh.statusCode).toBe(200);
  });
});

describe('GET /v1/agents', () => {
  it('filters by derived status, agent type and task type, and refuses an unknown status', async () => {
    const other = await h.register(['u']);
    await heartbeat(other, { status: 'running' });
    const ids = async (query: string) =>
      (await h.request('GET', `/v1/agents${query}`)).json().agents.map((a: { id: string }) => a.id);
    expect(await ids('?status=running')).toEqual([other.agentId]);
    expect(await ids('?status=idle,running')).toEqual([agent.agentId, other.agentId]);
    expect(await ids('?taskType=u')).toEqual([other.agentId]);
    expect(await ids('?agentType=nope')).toEqual([]);
    const bad = await h.request('GET', '/v1/agents?status=running,asleep');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toContain('one of');
  });
});

describe('GET /v1/agents/{id}/diagnosis and /conditions', () => {
  it('explains the status with reasons and suggestions; lists conditions', async () => {
    await heartbeat(agent, { status: 'running', dependencies: [{ name: 'openai', state: 'down' }] });
    // It does not require openai: a dependency it does not need does not put it at risk.
    let d = (await h.request('GET', `/v1/agents/${agent.agentId}/diagnosis`)).json();
    expect(d).toMatchObject({ agentId: agent.agentId, status: 'running' });
    expect(d.reasons.map((r: { code: string }) => r.code)).toEqual(['healthy']);
    const needy = (
      await h.request('POST', '/v1/agents', {
        token: TOKENS.enrollment,
        body: { agentType: 'x', requires: ['openai'] },
      })
    ).json();
    const n: TestAgent = { agentId: needy.agent.id, token: needy.token };
    await heartbeat(n, { status: 'running' });
    d = (await h.request('GET', `/v1/agents/${n.agentId}/diagnosis`)).json();
    expect(d.status).toBe('at_risk');
    expect(d.reasons[0]).toMatchObject({ code: 'dependency_down' });
    expect(d.summary).toContain('at_risk');
    expect(d.suggestions.length).toBeGreaterThan(0);
    const c = (await h.request('GET', `/v1/agents/${n.agentId}/conditions`)).json();
    expect(c.conditions).toEqual([
      expect.objectContaining({ condition: 'dependency_down', closedAt: null, agentId: n.agentId }),
    ]);
    expect(
      (await h.request('GET', `/v1/agents/${n.agentId}/conditions?open=false`)).json().conditions,
    ).toEqual([]);
    expect((await h.request('GET', '/v1/agents/agt_nope/diagnosis')).statusCode).toBe(404);
    expect((await h.request('GET', '/v1/agents/agt_nope/conditions')).statusCode).toBe(404);
  });
});

describe('policies', () => {
  it('GET /v1/policies shows the built-in defaults without a file', async () => {
    const res = await h.request('GET', '/v1/policies', { token: TOKENS.readonly });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      source: null,
      lastError: null,
      policies: [expect.objectContaining({ name: 'default', agentType: '*' })],
      taskTypes: {},
    });
  });

  it('POST /v1/policies/check validates JSON {source} and raw YAML, naming line and field', async () => {
    const good = 'policies:\n  - name: a\n    agent_type: a\n    heartbeat: { expected_interval: 10s }\n';
    const ok = await h.request('POST', '/v1/policies/check', { body: { source: good, file: 'a.yaml' } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({
      valid: true,
      errors: [],
      policies: [
        expect.objectContaining({
          name: 'a',
          heartbeat: expect.objectContaining({ expectedIntervalMs: 10_000 }),
        }),
        expect.objectContaining({ name: 'default', agentType: '*' }),
      ],
    });
    const bad =
      'policies:\n  - name: a\n    agent_type: a\n    heartbeat: { expected_interval: 5 minutes }\n';
    const res = await h.request('POST', '/v1/policies/check', {
      payload: bad,
      headers: { 'content-type': 'application/yaml' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().valid).toBe(false);
    expect(res.json().errors[0]).toMatchObject({
      file: 'policies.yaml',
      line: 4,
      path: 'policies.0.heartbeat.expected_interval',
    });
    const notJson = await h.request('POST', '/v1/policies/check', { body: { yaml: good } });
    expect(notJson.statusCode).toBe(400);
    // It only reads: the read-only token may check too; the enrollment token may not.
    const ro = await h.request('POST', '/v1/policies/check', {
      token: TOKENS.readonly,
      body: { source: good },
    });
    expect(ro.statusCode).toBe(200);
    const enroll = await h.request('POST', '/v1/policies/check', {
      token: TOKENS.enrollment,
      body: { source: good },
    });
    expect(enroll.statusCode).toBe(403);
  });

  it('POST /v1/policies/check refuses a deeply nested file and keeps serving (it once overflowed the stack)', async () => {
    const deep = `policies: ${'['.repeat(10_000)}${']'.repeat(10_000)}\n`;
    for (const request of [
      { payload: deep, headers: { 'content-type': 'application/yaml' } },
      { body: { source: deep } },
      { payload: deep, headers: { 'content-type': 'application/yaml' } },
    ]) {
      const res = await h.request('POST', '/v1/policies/check', { token: TOKENS.readonly, ...request });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        valid: false,
        errors: [{ line: 1, column: 74, message: expect.stringMatching(/nest deeper than 64 levels/) }],
      });
    }
    expect((await h.request('GET', '/v1/policies')).statusCode).toBe(200);
  });
});

describe('GET /metrics', () => {
  it("exports the watchdog's series: agents by status, open conditions, heartbeats", async () => {
    await heartbeat(agent, { status: 'running' });
    const text = (await h.request('GET', '/metrics')).payload;
    expect(text).toContain('rouse_agents{status="running"} 1');
    expect(text).toContain('rouse_agents{status="lost"} 0');
    expect(text).toContain('rouse_agent_open_conditions{condition="heartbeat_timeout"} 0');
    expect(text).toMatch(/rouse_watchdog_evaluations_total\{\} [1-9]/);
    expect(text).toContain('# TYPE rouse_agent_heartbeat_duration_seconds histogram');
  });
});
