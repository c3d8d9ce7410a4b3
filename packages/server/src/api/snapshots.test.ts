/**
 * Agent snapshots over HTTP: PUT a full one, PATCH it with a JSON merge patch
 * (`application/merge-patch+json`), GET it composed; who may (403), what is refused (400, 404, 413,
 * 415), and the next incarnation of a keyed agent receiving it at registration.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type TestAgent, TOKENS } from '../test-support/api-harness.js';

let h: Harness;
afterEach(async () => {
  await h.close();
});

const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' };
const url = (agent: TestAgent | string) =>
  `/v1/agents/${typeof agent === 'string' ? agent : agent.agentId}/snapshot`;
const put = (agent: TestAgent, body: unknown, token = agent.token) =>
  h.request('PUT', url(agent), { token, body });
const patch = (agent: TestAgent, body: unknown, o: { token?: string; query?: Record<string, string> } = {}) =>
  h.request('PATCH', url(agent), {
    token: o.token ?? agent.token,
    payload: JSON.stringify(body),
    headers: MERGE_PATCH,
    ...(o.query ? { query: o.query } : {}),
  });

describe('agent snapshots over HTTP', () => {
  it('PUT stores a full snapshot, PATCH merges into it, GET returns the composed state', async () => {
    h = await createHarness();
    const agent = await h.register();
    const first = await put(agent, {
      state: { step: 1, plan: { todo: ['a', 'b'], done: [] } },
      ttlMs: 60_000,
    });
    expect(first.statusCode).toBe(200);
    expect(first.json().snapshot).toMatchObject({
      agentId: agent.agentId,
      version: 1,
      deltas: 0,
      ttlMs: 60_000,
    });
    expect(first.json().snapshot.state).toBeUndefined();

    const patched = await patch(agent, { step: 2, plan: { todo: ['b'], done: ['a'] }, note: 'half way' });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().snapshot).toMatchObject({ version: 2, deltas: 1, ttlMs: 60_000 });
    const removed = await patch(agent, { note: null }, { query: { ttlMs: '120000' } });
    expect(removed.json().snapshot).toMatchObject({ version: 3, ttlMs: 120_000 });

    const got = await h.request('GET', url(agent), { token: agent.token });
    expect(got.statusCode).toBe(200);
    const { snapshot } = got.json();
    expect(snapshot).toMatchObject({
      agentId: agent.agentId,
      state: { step: 2, plan: { todo: ['b'], done: ['a'] } },
      version: 3,
      deltas: 2,
      ttlMs: 120_000,
    });
    expect(snapshot.sizeBytes).toBe(Buffer.byteLength(JSON.stringify(snapshot.state)));
    expect(snapshot.expiresAt - snapshot.updatedAt).toBe(120_000);
    // with a charset parameter too
    const charset = await h.request('PATCH', url(agent), {
      token: agent.token,
      payload: JSON.stringify({ charset: true }),
      headers: { 'content-type': 'application/merge-patch+json; charset=utf-8' },
    });
    expect(charset.statusCode).toBe(200);
    await patch(agent, { charset: null });
    // plain JSON is taken as a merge patch too
    const plain = await h.request('PATCH', url(agent), { token: agent.token, body: { step: 3 } });
    expect(plain.json().snapshot.version).toBe(6);
    // the read-only and admin tokens read it
    for (const token of [TOKENS.readonly, TOKENS.admin]) {
      expect((await h.request('GET', url(agent), { token })).json().snapshot.state.step).toBe(3);
    }
  });

  it('an agent token writes and reads only its own agent’s snapshot (403)', async () => {
    h = await createHarness();
    const agent = await h.register();
    const other = await h.register();
    await put(agent, { state: { secret: 1 } });
    expect((await put(agent, { state: {} }, other.token)).statusCode).toBe(403);
    expect((await patch(agent, { x: 1 }, { token: other.token })).statusCode).toBe(403);
    const read = await h.request('GET', url(agent), { token: other.token });
    expect(read.statusCode).toBe(403);
    expect(read.json().error.code).toBe('forbidden');
    for (const token of [TOKENS.readonly, TOKENS.enrollment]) {
      expect((await put(agent, { state: {} }, token)).statusCode).toBe(403);
    }
    expect((await h.request('GET', url(agent), { token: TOKENS.enrollment })).statusCode).toBe(403);
    expect((await h.request('GET', url(agent), { token: null })).statusCode).toBe(401);
    expect((await h.request('GET', url(agent), { token: agent.token })).json().snapshot.state).toEqual({
      secret: 1,
    });
  });

  it('404 with nothing to read or patch, or no such agent', async () => {
    h = await createHarness();
    const agent = await h.register();
    const none = await h.request('GET', url(agent), { token: agent.token });
    expect(none.statusCode).toBe(404);
    expect(none.json().error).toMatchObject({
      code: 'not_found',
      details: { kind: 'snapshot', id: agent.agentId },
    });
    const nothingToPatch = await patch(agent, { a: 1 });
    expect(nothingToPatch.statusCode).toBe(404);
    expect(nothingToPatch.json().error.message).toMatch(/PUT a full snapshot first/);
    const noAgent = await h.request('PUT', url('agt_nobody'), { body: { state: {} } });
    expect(noAgent.statusCode).toBe(404);
    expect(noAgent.json().error.details).toMatchObject({ kind: 'agent' });
  });

  it('refuses bad bodies (400) and other media types (415), changing nothing', async () => {
    h = await createHarness();
    const agent = await h.register();
    await put(agent, { state: { kept: true } });
    const bad: [string, unknown][] = [
      ['state not an object', { state: [1, 2] }],
      ['state missing', { ttlMs: 60_000 }],
      ['unknown field', { state: {}, extra: 1 }],
      ['ttl too short', { state: {}, ttlMs: 10 }],
      ['ttl not a number', { state: {}, ttlMs: '1h' }],
    ];
    for (const [why, body] of bad) {
      const res = await put(agent, body);
      expect(res.statusCode, why).toBe(400);
      expect(res.json().error.code, why).toBe('validation_failed');
    }
    expect((await patch(agent, [1, 2])).statusCode).toBe(400);
    expect((await patch(agent, 'text')).statusCode).toBe(400);
    expect((await patch(agent, { a: 1 }, { query: { ttlMs: 'soon' } })).statusCode).toBe(400);
    expect((await patch(agent, { a: 1 }, { query: { ttlMs: '5' } })).statusCode).toBe(400);
    const empty = await h.request('PATCH', url(agent), {
      token: agent.token,
      payload: '',
      headers: MERGE_PATCH,
    });
    expect(empty.statusCode).toBe(400);
    const broken = await h.request('PATCH', url(agent), {
      token: agent.token,
      payload: '{"a":',
      headers: MERGE_PATCH,
    });
    expect(broken.statusCode).toBe(400);
    const deep = await h.request('PATCH', url(agent), {
      token: agent.token,
      payload: `${'{"a":'.repeat(100)}1${'}'.repeat(100)}`,
      headers: MERGE_PATCH,
    });
    expect(deep.statusCode).toBe(400);
    expect(deep.json().error.details).toMatchObject({ maxDepth: 64 });
    for (const type of ['text/plain', 'application/json-patch+json']) {
      const res = await h.request('PATCH', url(agent), {
        token: agent.token,
        payload: '{"a":1}',
        headers: { 'content-type': type },
      });
      expect(res.statusCode, type).toBe(415);
      expect(res.json().error.code).toBe('unsupported_media_type');
    }
    const got = (await h.request('GET', url(agent), { token: agent.token })).json().snapshot;
    expect(got).toMatchObject({ state: { kept: true }, version: 1 });
  });

  it('refuses a body over the snapshot body limit with 413', async () => {
    h = await createHarness({ limits: { snapshotBodyBytes: 2048 } });
    const agent = await h.register();
    const big = { state: { text: 'x'.repeat(4096) } };
    const res = await put(agent, big);
    expect(res.statusCode).toBe(413);
    expect(res.json().error).toMatchObject({ code: 'payload_too_large', details: { limitBytes: 2048 } });
    expect((await patch(agent, big.state)).statusCode).toBe(413);
    expect((await put(agent, { state: { text: 'x'.repeat(1000) } })).statusCode).toBe(200);
  });

  it('takes snapshots larger than other JSON bodies (over 1 MiB), up to its own limit', async () => {
    h = await createHarness();
    const agent = await h.register();
    const state = { text: 'y'.repeat(3 * 1024 * 1024) };
    expect((await put(agent, { state })).statusCode).toBe(200);
    const got = await h.request('GET', url(agent), { token: agent.token });
    expect(got.json().snapshot.state.text).toHaveLength(3 * 1024 * 1024);
  });

  it('a keyed agent registering again receives its latest live snapshot; a new slot receives null', async () => {
    h = await createHarness();
    const register = (key?: string) =>
      h.request('POST', '/v1/agents', {
        token: TOKENS.enrollment,
        body: { agentType: 'bot', ...(key === undefined ? {} : { key }) },
      });
    const first = (await register('host-1/bot')).json();
    expect(first.snapshot).toBeNull();
    const agent = { agentId: first.agent.id as string, token: first.token as string };
    await put(agent, { state: { turn: 3 } });
    await patch(agent, { turn: 4 });
    const again = await register('host-1/bot');
    expect(again.statusCode).toBe(201);
    expect(again.json()).toMatchObject({
      incarnation: 2,
      agent: { id: agent.agentId },
      snapshot: { agentId: agent.agentId, state: { turn: 4 }, version: 2 },
    });
    // the previous incarnation's token is void: it cannot overwrite what the new one received
    expect((await put(agent, { state: { turn: 0 } })).statusCode).toBe(401);
    expect((await register()).json().snapshot).toBeNull();
  });
});
