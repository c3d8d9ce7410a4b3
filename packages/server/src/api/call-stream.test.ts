/**
 * The call stream, over real sockets against a real coordinator: a call is answered exactly as its
 * HTTP request is (success and every refusal), upgrades are refused in the protocol's shape,
 * framing abuse closes only the abusing stream, cancels release long-polls, shutdown ends streams.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { STREAMED_ROUTES } from '@rouse/protocol';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RouseServer, startRouseServer } from '../server.js';
import { openCallStream, RawCallStream, type Refusal } from '../test-support/call-stream-client.js';

let dir: string;
let server: RouseServer;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rouse-calls-'));
  server = await startRouseServer({
    port: 0,
    dataDir: dir,
    db: ':memory:',
    logger: pino({ level: 'silent' }),
  });
});
afterEach(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  body: unknown;
}

/** The same call as an HTTP request: body as raw text (undefined: none). */
async function http(method: string, path: string, token: string, text?: string): Promise<Answer> {
  const res = await fetch(server.url + path, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(text === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(text === undefined ? {} : { body: text }),
  });
  const body = await res.text();
  return { status: res.status, body: body === '' ? undefined : JSON.parse(body) };
}

async function stream(token: string): Promise<RawCallStream> {
  const s = await openCallStream(server.url, token);
  if (!(s instanceof RawCallStream)) throw new Error(`not upgraded: ${JSON.stringify(s)}`);
  return s;
}

async function registerAgent(name: string): Promise<{ id: string; token: string }> {
  const res = await http(
    'POST',
    '/v1/agents',
    server.agentToken,
    JSON.stringify({ agentType: 'calls', name, taskTypes: ['t'] }),
  );
  const body = res.body as { agent: { id: string }; token: string };
  return { id: body.agent.id, token: body.token };
}

/** A new agent's stream with a long-poll claim (20 s) the coordinator is holding. */
async function waitingClaim(name: string): Promise<{ s: RawCallStream; id: number }> {
  const agent = await registerAgent(name);
  const s = await stream(agent.token);
  const id = s.send('POST', `/v1/agents/${agent.id}/claim`, JSON.stringify({ types: ['t'], waitMs: 20_000 }));
  await waitFor(async () => /rouse_claim_waiters 1/.test(await metricsText()));
  return { s, id };
}

async function metricsText(): Promise<string> {
  const res = await fetch(`${server.url}/metrics`, {
    headers: { authorization: `Bearer ${server.adminToken}` },
  });
  return res.text();
}

describe('call stream', () => {
  it('serves exactly the routes the protocol lists', () => {
    expect([...server.app.callStreams.routes].sort()).toEqual([...STREAMED_ROUTES].sort());
    for (const r of STREAMED_ROUTES) {
      const [method, url] = r.split(' ') as [string, string];
      expect(server.app.hasRoute({ method: method as 'POST', url })).toBe(true);
    }
  });

  it('answers every refusal exactly as HTTP does', async () => {
    const a = await registerAgent('a');
    const b = await registerAgent('b');
    const deep = `${'['.repeat(200)}${']'.repeat(200)}`;
    const cases: [string, string, string, string | undefined][] = [
      ['POST', '/v1/tasks', server.adminToken, '{}'],
      ['POST', '/v1/tasks', server.adminToken, '{'],
      ['POST', '/v1/tasks', server.adminToken, '   '],
      ['POST', '/v1/tasks', server.adminToken, deep],
      ['POST', '/v1/tasks', server.adminToken, '{"type":"t","payload":{"__proto__":{"x":1}}}'],
      ['POST', '/v1/tasks', server.adminToken, undefined],
      ['POST', '/v1/tasks', server.adminToken, JSON.stringify({ type: 't', payload: 'x'.repeat(1_100_000) })],
      ['POST', '/v1/tasks', a.token, '{"type":"t"}'],
      ['POST', '/v1/tasks', server.readonlyToken, '{"type":"t"}'],
      ['POST', '/v1/tasks', 'not-a-token', '{"type":"t"}'],
      ['POST', `/v1/agents/${b.id}/claim`, a.token, '{"types":["t"]}'],
      ['POST', `/v1/agents/${a.id}/claim`, a.token, '{"types":[]}'],
      ['POST', `/v1/agents/${a.id}/heartbeat`, a.token, '{"tasks":"no"}'],
      ['POST', '/v1/tasks/tsk_missing/complete', a.token, '{"version":1,"result":null}'],
      ['POST', '/v1/tasks/tsk_missing/fail', a.token, '{"version":1}'],
      ['POST', '/v1/tasks/tsk_missing/start', a.token, '{"version":1}'],
      [
        'POST',
        '/v1/tasks/tsk_missing/heartbeat',
        a.token,
        JSON.stringify({ version: 1, phase: 'x'.repeat(5000) }),
      ],
      ['POST', `/v1/tasks/${'x'.repeat(600)}/complete`, a.token, '{"version":1}'],
      ['POST', '/v1/tasks/%E0%A4%A/complete', a.token, '{"version":1}'],
      ['POST', '/v1/tasks/batch', server.adminToken, '{"tasks":[]}'],
    ];
    const streams = new Map<string, RawCallStream>();
    for (const token of new Set(cases.map((c) => c[2]).filter((t) => t !== 'not-a-token'))) {
      streams.set(token, await stream(token));
    }
    // A stream opened with a valid token whose calls carry it: the bad-token case is the upgrade's.
    for (const [method, path, token, text] of cases) {
      const viaHttp = await http(method, path, token, text);
      expect(viaHttp.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
      if (token === 'not-a-token') {
        const refused = (await openCallStream(server.url, token)) as Refusal;
        expect(refused).toEqual(viaHttp);
        continue;
      }
      const s = streams.get(token)!;
      const viaStream = await s.answer(s.send(method, path, text));
      expect(viaStream, `${method} ${path} ${text?.slice(0, 40)}`).toEqual(viaHttp);
    }
    for (const s of streams.values()) s.close();
  });

  it('creates, claims, heartbeats and completes as HTTP does, and fences a stale completion alike', async () => {
    const admin = await stream(server.adminToken);
    const create = { type: 't', payload: { n: 1 }, idempotencyKey: 'k1' };
    const created = await admin.call('POST', '/v1/tasks', create);
    expect(created.status).toBe(201);
    const again = await http('POST', '/v1/tasks', server.adminToken, JSON.stringify(create));
    expect(again.status).toBe(200);
    expect(await admin.call('POST', '/v1/tasks', create)).toEqual(again);
    const batch = await admin.call('POST', '/v1/tasks/batch', { tasks: [{ type: 't' }, { type: 't' }] });
    expect(batch.status).toBe(201);
    expect((batch.body as { tasks: unknown[] }).tasks).toHaveLength(2);

    const agent = await registerAgent('w');
    const s = await stream(agent.token);
    const claimed = await s.call('POST', `/v1/agents/${agent.id}/claim`, {
      types: ['t'],
      max: 1,
      start: true,
    });
    expect(claimed.status).toBe(200);
    const task = (claimed.body as { tasks: { id: string; version: number; status: string }[] }).tasks[0]!;
    expect(task.status).toBe('running');
    const beat = await s.call('POST', `/v1/agents/${agent.id}/heartbeat`, {
      tasks: [{ taskId: task.id, version: task.version, progress: 0.5 }],
    });
    expect(beat.status).toBe(200);
    const done = await s.call('POST', `/v1/tasks/${task.id}/complete`, {
      version: task.version,
      result: { ok: 1 },
    });
    expect(done.status).toBe(200);
    const read = await http('GET', `/v1/tasks/${task.id}`, server.adminToken);
    expect((read.body as { task: { status: string } }).task.status).toBe('completed');
    expect((done.body as { task: unknown }).task).toEqual((read.body as { task: unknown }).task);
    // A stale completion (an older version) is refused the same way on both.
    const stale = JSON.stringify({ version: task.version - 1, result: null });
    const staleHttp = await http('POST', `/v1/tasks/${task.id}/complete`, agent.token, stale);
    expect(staleHttp.status).toBe(409);
    expect(await s.answer(s.send('POST', `/v1/tasks/${task.id}/complete`, stale))).toEqual(staleHttp);
    // Counted with the route's HTTP requests.
    const text = await metricsText();
    expect(text).toMatch(
      /rouse_http_requests_total\{method="POST",route="\/v1\/tasks\/:id\/complete",status="200"\} 1/,
    );
    expect(text).toMatch(/rouse_call_streams\{\} 2/);
    expect(text).toMatch(/rouse_call_streams_opened_total\{\} 2/);
    s.close();
    admin.close();
  });

  it('checks the token at every call: once the agent has left, its open stream is refused as HTTP is', async () => {
    const agent = await registerAgent('leaver');
    const s = await stream(agent.token);
    const beat = JSON.stringify({ tasks: [] });
    expect((await s.answer(s.send('POST', `/v1/agents/${agent.id}/heartbeat`, beat))).status).toBe(200);
    expect((await http('DELETE', `/v1/agents/${agent.id}`, agent.token)).status).toBeLessThan(300);
    const viaHttp = await http('POST', `/v1/agents/${agent.id}/heartbeat`, agent.token, beat);
    expect(viaHttp.status).toBe(401);
    expect(await s.answer(s.send('POST', `/v1/agents/${agent.id}/heartbeat`, beat))).toEqual(viaHttp);
    s.close();
  });

  it('matches answers to calls made together, whatever order they finish in', async () => {
    const s = await stream(server.adminToken);
    const ids = Array.from({ length: 50 }, (_, i) =>
      s.send('POST', '/v1/tasks', JSON.stringify({ type: 't', payload: { i } })),
    );
    const answers = await Promise.all(ids.map((id) => s.answer(id)));
    answers.forEach((a, i) => {
      expect(a.status).toBe(201);
      expect((a.body as { task: { payload: { i: number } } }).task.payload.i).toBe(i);
    });
    s.close();
  });

  it('refuses upgrades in the protocol shape: wrong path, wrong protocol, no or bad token', async () => {
    const wrongPath = (await openCallStream(server.url, server.adminToken, { path: '/v1/tasks' })) as Refusal;
    expect(wrongPath.status).toBe(404);
    expect(wrongPath.body).toMatchObject({ error: { code: 'not_found' } });
    const wrongProtocol = (await openCallStream(server.url, server.adminToken, {
      protocol: 'websocket',
    })) as Refusal;
    expect(wrongProtocol.status).toBe(400);
    expect(wrongProtocol.body).toMatchObject({ error: { code: 'validation_failed' } });
    const noToken = (await openCallStream(server.url, null)) as Refusal;
    expect(noToken.status).toBe(401);
    expect(noToken.body).toMatchObject({ error: { code: 'unauthorized' } });
    // The server is unharmed and still upgrades.
    (await stream(server.adminToken)).close();
  });

  it('closes a stream that breaks the framing, and only that one', async () => {
    const good = await stream(server.adminToken);
    const abuses: ((s: RawCallStream) => void)[] = [
      (s) => s.socket.write(Buffer.from([0x7f, 0xff, 0xff, 0xff])), // a 2 GB frame announced
      (s) => s.socket.write(Buffer.from([0, 0, 0, 5, 0, 0, 0, 1, 9])), // an unknown kind
      (s) => s.socket.write(Buffer.from([0, 0, 0, 1, 0])), // a frame too short to be one
      (s) => s.send('POST', '/v1/tasks', '{}', 0), // id 0
      (s) => {
        const id = s.send('POST', `/v1/agents/x/claim`, '{"types":["t"],"waitMs":5000}');
        s.send('POST', '/v1/tasks', '{"type":"t"}', id); // an id still in flight
      },
    ];
    for (const abuse of abuses) {
      const s = await stream(server.adminToken);
      abuse(s);
      await s.closed;
    }
    expect((await good.call('POST', '/v1/tasks', { type: 't' })).status).toBe(201);
    good.close();
  });

  it('frames are bounded by what the token may call: 1 MiB for an agent, the batch limit for the admin', async () => {
    const agent = await registerAgent('big');
    const s = await stream(agent.token);
    const announce = Buffer.alloc(4);
    announce.writeUInt32BE(2 * 1024 * 1024);
    s.socket.write(announce);
    await s.closed;
    const admin = await stream(server.adminToken);
    const big = JSON.stringify({ tasks: [{ type: 't', payload: 'x'.repeat(2_000_000) }] });
    const viaStream = await admin.answer(admin.send('POST', '/v1/tasks/batch', big));
    const viaHttp = await http('POST', '/v1/tasks/batch', server.adminToken, big);
    expect(viaStream.status).toBe(201);
    expect(viaHttp.status).toBe(201);
    const payload = (a: typeof viaStream) => (a.body as { tasks: { payload: unknown }[] }).tasks[0]!.payload;
    expect(payload(viaStream)).toEqual(payload(viaHttp));
    admin.close();
  });

  it('a cancel releases a long-poll: the task created next is not handed to it', async () => {
    const { s, id } = await waitingClaim('lp');
    s.cancel(id);
    await waitFor(async () => /rouse_claim_waiters 0/.test(await metricsText()));
    const created = await http('POST', '/v1/tasks', server.adminToken, JSON.stringify({ type: 't' }));
    const taskId = (created.body as { task: { id: string } }).task.id;
    const read = await http('GET', `/v1/tasks/${taskId}`, server.adminToken);
    expect((read.body as { task: { status: string } }).task.status).toBe('created');
    s.close();
  });

  it('a closed stream releases its long-polls', async () => {
    const { s } = await waitingClaim('gone');
    s.close();
    await waitFor(async () => /rouse_claim_waiters 0/.test(await metricsText()));
  });

  it('on shutdown a waiting long-poll is answered, the stream ends, and close does not hang', async () => {
    const { s, id } = await waitingClaim('sd');
    await server.close();
    const answer = await s.answer(id);
    expect(answer.status).toBeLessThan(600);
    await s.closed;
  });
});

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('condition not reached within 5 s');
}
