import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from './client.js';
import {
  InvalidOptionError,
  isRetryable,
  RouseApiError,
  RouseNetworkError,
  wasNotApplied,
} from './errors.js';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A real HTTP server on 127.0.0.1 answering with `handler`; returns its URL and the requests seen. */
async function serve(handler: Handler): Promise<{
  url: string;
  seen: { method: string; url: string; body: string; headers: IncomingMessage['headers'] }[];
}> {
  const seen: { method: string; url: string; body: string; headers: IncomingMessage['headers'] }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, body, headers: req.headers });
      handler(req, body, res);
    });
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};
const fast = { attempts: 3, baseDelayMs: 1, maxDelayMs: 5 };
/** The tests of the HTTP transport turn the call stream off (its own tests are at the end). */
const HTTP = { callStream: false } as const;

describe('Client', () => {
  it('sends the token and JSON, and unwraps responses', async () => {
    const { url, seen } = await serve((req, _body, res) => {
      if (req.url === '/v1/tasks' && req.method === 'POST') return json(res, 201, { task: { id: 't1' } });
      if (req.url === '/v1/tasks/t%2F1') return json(res, 200, { task: { id: 't/1' } });
      if (req.url?.startsWith('/v1/tasks?'))
        return json(res, 200, { tasks: [{ id: 'a' }], nextCursor: 'c2' });
      if (req.url === '/v1/tasks/t1/events') return json(res, 200, { events: [{ seq: 1 }] });
      if (req.url === '/v1/agents') return json(res, 200, { agents: [{ id: 'agt' }] });
      json(res, 404, { error: { code: 'not_found', message: 'no' } });
    });
    const client = new Client({ ...HTTP, url: `${url}/`, token: 'secret' });
    // a new task: the server sends no `deduplicated`; the client says false, not undefined
    expect(await client.createTask({ type: 'x', payload: { a: 1 } })).toEqual({
      task: { id: 't1' },
      deduplicated: false,
    });
    expect(seen[0]!.headers.authorization).toBe('Bearer secret');
    expect(seen[0]!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(seen[0]!.body)).toEqual({ type: 'x', payload: { a: 1 } });
    expect((await client.getTask('t/1')).id).toBe('t/1');
    const page = await client.listTasks({
      status: ['failed', 'timeout'],
      label: ['repo:acme', 'env:prod'],
      limit: 5,
    });
    expect(page).toEqual({ tasks: [{ id: 'a' }], nextCursor: 'c2' });
    const q = new URL(seen[2]!.url, url).searchParams;
    expect(q.get('status')).toBe('failed,timeout');
    expect(q.getAll('label')).toEqual(['repo:acme', 'env:prod']);
    expect(q.get('limit')).toBe('5');
    expect(await client.getTaskEvents('t1')).toEqual([{ seq: 1 }]);
    expect(await client.listAgents()).toEqual([{ id: 'agt' }]);
    await client.withToken('other').listAgents();
    expect(seen.at(-1)!.headers.authorization).toBe('Bearer other');
  });

  it('createTask: deduplicated is always a boolean', async () => {
    let known = false;
    const { url } = await serve((_req, _body, res) => {
      if (known) return json(res, 200, { task: { id: 't1' }, deduplicated: true });
      known = true;
      json(res, 201, { task: { id: 't1' } });
    });
    const client = new Client({ ...HTTP, url, token: 'secret' });
    const req = { type: 'x', idempotencyKey: 'k' };
    expect((await client.createTask(req)).deduplicated).toBe(false);
    expect((await client.createTask(req)).deduplicated).toBe(true);
  });

  it('reads the watchdog routes: agents by status, diagnosis, conditions, policies, a policy check', async () => {
    const { url, seen } = await serve((req, body, res) => {
      const u = new URL(req.url!, 'http://x');
      if (u.pathname === '/v1/tasks') return json(res, 200, { task: { id: 'old' }, deduplicated: true });
      if (u.pathname === '/v1/agents')
        return json(res, 200, { agents: [{ id: 'agt_1', status: 'stalled' }] });
      if (u.pathname === '/v1/agents/agt%2F1/diagnosis')
        return json(res, 200, { agentId: 'agt/1', status: 'lost', summary: 'no heartbeat', reasons: [] });
      if (u.pathname === '/v1/agents/agt_1/conditions')
        return json(res, 200, { conditions: [{ condition: 'progress_stalled', closedAt: null }] });
      if (u.pathname === '/v1/policies' && req.method === 'GET')
        return json(res, 200, { source: null, loadedAt: 1, policies: [], taskTypes: {}, lastError: null });
      if (u.pathname === '/v1/policies/check') {
        const { file } = JSON.parse(body) as { file?: string };
        return json(res, 200, {
          valid: false,
          errors: [{ file, line: 2, column: 3, path: 'x', message: 'm' }],
        });
      }
      json(res, 404, { error: { code: 'not_found', message: 'no' } });
    });
    const client = new Client({ ...HTTP, url, token: 'secret' });
    expect(await client.createTask({ type: 'x', idempotencyKey: 'k' })).toEqual({
      task: { id: 'old' },
      deduplicated: true,
    });
    expect(
      await client.listAgents({ status: ['stalled', 'lost'], agentType: 'bot', taskType: 'review' }),
    ).toEqual([{ id: 'agt_1', status: 'stalled' }]);
    const q = new URL(seen.at(-1)!.url, url).searchParams;
    expect([q.get('status'), q.get('agentType'), q.get('taskType')]).toEqual([
      'stalled,lost',
      'bot',
      'review',
    ]);
    await client.listAgents();
    expect(seen.at(-1)!.url).toBe('/v1/agents');
    expect((await client.diagnoseAgent('agt/1')).summary).toBe('no heartbeat');
    expect(await client.agentConditions('agt_1', { open: false, limit: 5 })).toEqual([
      { condition: 'progress_stalled', closedAt: null },
    ]);
    expect(seen.at(-1)!.url).toBe('/v1/agents/agt_1/conditions?open=false&limit=5');
    await client.agentConditions('agt_1');
    expect(seen.at(-1)!.url).toBe('/v1/agents/agt_1/conditions');
    expect((await client.policies()).lastError).toBeNull();
    const check = await client.checkPolicies('policies: [', 'rouse.yaml');
    expect(check.valid).toBe(false);
    expect(check.errors[0]).toMatchObject({ file: 'rouse.yaml', line: 2 });
    expect(JSON.parse(seen.at(-1)!.body)).toEqual({ source: 'policies: [', file: 'rouse.yaml' });
    await client.checkPolicies('policies: []');
    expect(JSON.parse(seen.at(-1)!.body)).toEqual({ source: 'policies: []' });
  });

  it('maps error bodies to RouseApiError and proxies and sockets to RouseNetworkError', async () => {
    const { url } = await serve((req, _body, res) => {
      if (req.url === '/v1/tasks/stale/complete') {
        return json(res, 409, {
          error: { code: 'stale_version', message: 'not current', details: { currentVersion: 8 } },
        });
      }
      if (req.url === '/v1/tasks/boom') return res.writeHead(500).end('kaput');
      res.writeHead(502).end('<html>bad gateway</html>');
    });
    const client = new Client({ ...HTTP, url, token: 't', retry: { attempts: 1 } });
    const stale = await client.completeTask('stale', { version: 7 }).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(RouseApiError);
    expect(stale).toMatchObject({
      status: 409,
      code: 'stale_version',
      message: 'not current',
      details: { currentVersion: 8 },
    });
    expect(isRetryable(stale)).toBe(false);
    const boom = await client.getTask('boom').catch((e: unknown) => e);
    expect(boom).toMatchObject({ status: 500, code: 'internal' });
    const proxy = await client.getTask('x').catch((e: unknown) => e);
    expect(proxy).toBeInstanceOf(RouseNetworkError);
    expect(proxy).toMatchObject({ status: 502 });
    expect(isRetryable(proxy)).toBe(true);

    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const refused = new Client({ url: `http://127.0.0.1:${closedPort}`, token: 't', retry: { attempts: 1 } });
    const err = await refused.health().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RouseNetworkError);
    expect((err as RouseNetworkError).code).toBe('ECONNREFUSED');
    expect(isRetryable(err)).toBe(true);
  });

  it('retries GETs and fenced writes on 503, never claims or un-keyed creates', async () => {
    let failuresLeft = 0;
    const { url, seen } = await serve((req, _body, res) => {
      if (failuresLeft > 0) {
        failuresLeft--;
        return json(res, 503, { error: { code: 'unavailable', message: 'store down' } });
      }
      if (req.url?.includes('/claim')) return json(res, 200, { tasks: [] });
      if (req.url === '/v1/tasks' && req.method === 'POST') return json(res, 201, { task: { id: 'new' } });
      json(res, 200, { task: { id: 'ok' } });
    });
    const client = new Client({ ...HTTP, url, token: 't', retry: fast });

    failuresLeft = 2;
    expect((await client.getTask('a')).id).toBe('ok');
    expect(seen).toHaveLength(3);

    failuresLeft = 1;
    expect((await client.completeTask('a', { version: 1 })).id).toBe('ok');
    expect(seen).toHaveLength(5);

    failuresLeft = 1;
    await expect(client.claim('agt', { types: ['x'] })).rejects.toMatchObject({
      status: 503,
      code: 'unavailable',
    });
    expect(seen).toHaveLength(6);

    failuresLeft = 1;
    await expect(client.createTask({ type: 'x' })).rejects.toBeInstanceOf(RouseApiError);
    expect(seen).toHaveLength(7);

    failuresLeft = 1;
    expect((await client.createTask({ type: 'x', idempotencyKey: 'k' })).task.id).toBe('new');
    expect(seen).toHaveLength(9);

    failuresLeft = 5;
    await expect(client.getTask('a')).rejects.toMatchObject({ code: 'unavailable' });
    expect(seen).toHaveLength(12); // 3 attempts in all

    // A keyed create's 503 may have been done: the attempts budget bounds it, not the restart window.
    failuresLeft = 5;
    await expect(client.createTask({ type: 'x', idempotencyKey: 'k' })).rejects.toMatchObject({
      code: 'unavailable',
    });
    expect(seen).toHaveLength(15);
  });

  it('sends a call that must not run twice again only when it provably did nothing', async () => {
    // Nothing listens on the port yet: an un-keyed create (over the call stream, the default) waits
    // for the coordinator, as a refused connection did nothing.
    const probe = createServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const lateSeen: string[] = [];
    const late = createServer((req, res) => {
      lateSeen.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => json(res, 201, { task: { id: 'late' } }));
    });
    servers.push(late);
    // The default options: the coordinator comes back after 1.2 s, longer than the attempts budget
    // (4 tries, at most 0.7 s) and about as long as a restart takes.
    const waiting = new Client({ url: `http://127.0.0.1:${port}`, token: 't' });
    const creating = waiting.createTask({ type: 'x' });
    await new Promise((r) => setTimeout(r, 1200));
    late.listen(port, '127.0.0.1');
    expect((await creating).task.id).toBe('late');
    expect(lateSeen.filter((l) => l === 'POST /v1/tasks')).toHaveLength(1);

    // A connection reset after the call arrived: it may have been done, so it is not sent again.
    const { url: resetUrl, seen: resetSeen } = await serve((_req, _body, res) => res.socket?.destroy());
    const resetting = new Client({ ...HTTP, url: resetUrl, token: 't', retry: fast });
    const reset = await resetting.createTask({ type: 'x' }).catch((e: unknown) => e);
    expect(reset).toBeInstanceOf(RouseNetworkError);
    expect(wasNotApplied(reset)).toBe(false);
    expect(resetSeen).toHaveLength(1);
    await expect(resetting.cancelTask('t')).rejects.toBeInstanceOf(RouseNetworkError);
    expect(resetSeen).toHaveLength(2);

    // A coordinator shutting down refuses before acting (`applied: false`): sent again.
    let refusals = 0;
    const { url, seen } = await serve((_req, _body, res) => {
      if (refusals > 0) {
        refusals--;
        return json(res, 503, {
          error: { code: 'unavailable', message: 'shutting down', details: { applied: false } },
        });
      }
      json(res, 200, { task: { id: 'ok' }, commandId: 'cmd_1', intervention: null });
    });
    const client = new Client({ ...HTTP, url, token: 't', retry: fast });
    refusals = 1;
    expect((await client.createTask({ type: 'x' })).task.id).toBe('ok');
    expect(seen).toHaveLength(2);
    refusals = 1;
    expect((await client.cancelTask('a')).id).toBe('ok');
    expect(seen).toHaveLength(4);
    refusals = 1;
    await client.retryTask('a');
    expect(seen).toHaveLength(6);
    refusals = 1;
    expect(await client.sendCommand('agt', { type: 'wake' })).toMatchObject({ commandId: 'cmd_1' });
    expect(seen).toHaveLength(8);
    // A claim is the worker's claim loop's to repeat (it backs off and tells of the lost connection).
    refusals = 1;
    await expect(client.claim('agt', { types: ['x'] })).rejects.toMatchObject({ status: 503 });
    expect(seen).toHaveLength(9);
    // Past the attempts budget, refusals are sent again for `unreachableForMs` from the first one
    // (here 5 refusals in a few ms, within the default 10 s)...
    refusals = 5;
    expect((await client.createTask({ type: 'x' })).task.id).toBe('ok');
    expect(seen).toHaveLength(15);
    // ...then the refusal surfaces;
    refusals = Number.POSITIVE_INFINITY;
    const brief = new Client({ ...HTTP, url, token: 't', retry: { ...fast, unreachableForMs: 100 } });
    await expect(brief.createTask({ type: 'x' })).rejects.toMatchObject({ status: 503, code: 'unavailable' });
    expect(seen.length).toBeGreaterThan(15 + fast.attempts);
    // with `unreachableForMs: 0` (the CLI's), at the end of the attempts budget.
    const sent = seen.length;
    const budgetOnly = new Client({ ...HTTP, url, token: 't', retry: { ...fast, unreachableForMs: 0 } });
    await expect(budgetOnly.cancelTask('a')).rejects.toMatchObject({ status: 503, code: 'unavailable' });
    expect(seen).toHaveLength(sent + fast.attempts);
    refusals = 0;
  });

  it('effect keys: the key is URL-encoded; a claim is sent once, record and release are retried', async () => {
    let failuresLeft = 0;
    const { url, seen } = await serve((req, _body, res) => {
      if (failuresLeft > 0) {
        failuresLeft--;
        return json(res, 503, { error: { code: 'unavailable', message: 'store down' } });
      }
      if (req.method === 'POST')
        return json(res, 200, { outcome: 'claimed', claimId: 'c/1', claimExpiresAt: 9 });
      if (req.method === 'PUT')
        return json(res, 200, { outcome: 'recorded', result: { id: 'm1' }, doneAt: 10 });
      json(res, 200, { ok: true });
    });
    const client = new Client({ ...HTTP, url, token: 't', retry: fast });

    expect(await client.claimEffect('t/1', 'email:a@b', { version: 3, claimTtlMs: 5000 })).toEqual({
      outcome: 'claimed',
      claimId: 'c/1',
      claimExpiresAt: 9,
    });
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/tasks/t%2F1/effects/email%3Aa%40b/claim' });
    expect(JSON.parse(seen[0]!.body)).toEqual({ version: 3, claimTtlMs: 5000 });

    failuresLeft = 1;
    expect(await client.recordEffect('t/1', 'email:a@b', { claimId: 'c/1', result: { id: 'm1' } })).toEqual({
      outcome: 'recorded',
      result: { id: 'm1' },
      doneAt: 10,
    });
    expect(seen.slice(1).map((r) => `${r.method} ${r.url}`)).toEqual([
      'PUT /v1/tasks/t%2F1/effects/email%3Aa%40b',
      'PUT /v1/tasks/t%2F1/effects/email%3Aa%40b',
    ]);
    expect(JSON.parse(seen[2]!.body)).toEqual({ claimId: 'c/1', result: { id: 'm1' } });

    failuresLeft = 1;
    await client.releaseEffect('t/1', 'email:a@b', 'c/1');
    expect(seen.slice(3).map((r) => `${r.method} ${r.url}`)).toEqual([
      'DELETE /v1/tasks/t%2F1/effects/email%3Aa%40b?claimId=c%2F1',
      'DELETE /v1/tasks/t%2F1/effects/email%3Aa%40b?claimId=c%2F1',
    ]);

    failuresLeft = 1;
    await expect(client.claimEffect('t1', 'k', { version: 1 })).rejects.toMatchObject({
      status: 503,
      code: 'unavailable',
    });
    expect(seen).toHaveLength(6);
  });

  it('times out a silent server and honours the caller signal', async () => {
    const { url } = await serve(() => {
      // never answers
    });
    const client = new Client({ ...HTTP, url, token: 't', requestTimeoutMs: 50, retry: { attempts: 1 } });
    const err = await client.getTask('x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RouseNetworkError);
    expect((err as RouseNetworkError).code).toBe('timeout');

    const slow = new Client({ ...HTTP, url, token: 't', requestTimeoutMs: 60_000 });
    const ac = new AbortController();
    const reason = new Error('caller gave up');
    const pending = slow.claim('agt', { types: ['x'], waitMs: 1000 }, { signal: ac.signal });
    ac.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it('follows logs over SSE across chunk boundaries until the server closes', async () => {
    const { url, seen } = await serve((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': hello\n\ndata: {"seq":1,"at":1,"attempt":1,"stream":"stdout",');
      setImmediate(() => {
        res.write(
          '"text":"one"}\n\ndata: {"seq":2,"at":2,"attempt":1,"stream":"stderr","text":"two"}\r\n\r\n',
        );
        res.end();
      });
    });
    const client = new Client({ ...HTTP, url, token: 't' });
    const lines = [];
    for await (const line of client.followLogs('t1', { after: 0 })) lines.push(line);
    expect(lines.map((l) => l.text)).toEqual(['one', 'two']);
    expect(seen[0]!.headers.accept).toBe('text/event-stream');
    expect(seen[0]!.url).toBe('/v1/tasks/t1/logs?after=0');
  });

  it('a stream whose connection breaks ends in a RouseNetworkError, after the lines it carried', async () => {
    const { url } = await serve((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"seq":1,"at":1,"attempt":1,"stream":"stdout","text":"one"}\n\n');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const client = new Client({ ...HTTP, url, token: 't' });
    const lines: string[] = [];
    const err = await (async () => {
      for await (const line of client.followLogs('t1')) lines.push(line.text);
    })().catch((e: unknown) => e);
    expect(lines).toEqual(['one']);
    expect(err).toBeInstanceOf(RouseNetworkError);
    expect((err as Error).message).toMatch(/^the event stream from the coordinator was cut off/);
    expect(isRetryable(err)).toBe(true);
    expect(wasNotApplied(err)).toBe(false);
  });

  it('uploads and fetches results as bytes', async () => {
    const { url, seen } = await serve((req, body, res) => {
      if (req.method === 'PUT')
        return json(res, 200, {
          key: 'k',
          sizeBytes: body.length,
          contentType: req.headers['content-type'],
          sha256: 's',
        });
      if (req.url === '/v1/tasks/j/result') return json(res, 200, { answer: 42 });
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from([1, 2, 3]));
    });
    const client = new Client({ ...HTTP, url, token: 't' });
    const ref = await client.uploadResult('t1', 7, '{"big":true}', 'application/json');
    expect(ref).toMatchObject({ key: 'k', sizeBytes: 12, contentType: 'application/json' });
    expect(seen[0]!.url).toBe('/v1/tasks/t1/result?version=7');
    expect(await client.getResult('j')).toMatchObject({ json: { answer: 42 } });
    const bin = await client.getResult('b');
    expect([...bin.body]).toEqual([1, 2, 3]);
    expect(bin.json).toBeUndefined();
  });

  it('maps errors the same way when a fetch implementation is given', async () => {
    let calls = 0;
    const { url } = await serve((req, _body, res) => {
      calls++;
      if (req.url === '/v1/tasks/flaky' && calls === 1)
        return json(res, 503, { error: { code: 'unavailable', message: 'x' } });
      if (req.url === '/v1/tasks/flaky') return json(res, 200, { task: { id: 'flaky' } });
      if (req.url === '/v1/tasks/gone')
        return json(res, 404, { error: { code: 'not_found', message: 'no such task' } });
      // /v1/tasks/silent never answers
    });
    // a generous limit for the calls that are answered (fetch's first request is slow on a busy machine)
    const client = new Client({
      url,
      token: 't',
      fetch: globalThis.fetch,
      requestTimeoutMs: 5000,
      retry: fast,
    });
    expect((await client.getTask('flaky')).id).toBe('flaky');
    expect(calls).toBe(2);
    await expect(client.getTask('gone')).rejects.toMatchObject({
      status: 404,
      code: 'not_found',
      message: 'no such task',
    });
    const impatient = new Client({
      url,
      token: 't',
      fetch: globalThis.fetch,
      requestTimeoutMs: 50,
      retry: fast,
    });
    const err = await impatient
      .withToken('other')
      .getTask('silent')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RouseNetworkError);
    expect((err as RouseNetworkError).code).toBe('timeout');
  });

  it('rejects bad options naming the option', () => {
    expect(() => new Client({ url: 'localhost:7070', token: 't' })).toThrow(InvalidOptionError);
    expect(() => new Client({ url: 'localhost:7070', token: 't' })).toThrow(/^url must be/);
    // Said at construction, not as a 401 "missing Authorization header" at the first call.
    expect(() => new Client({ url: 'http://x', token: '' })).toThrow(/^token must be a non-empty string/);
    expect(() => new Client({ url: 'http://x', token: 't', retry: { attempts: 0 } })).toThrow(
      /retry.attempts must be/,
    );
    expect(() => new Client({ url: 'http://x', token: 't', retry: { unreachableForMs: -1 } })).toThrow(
      /^retry.unreachableForMs must be an integer from 0 to 3600000/,
    );
    expect(() => new Client({ url: 'http://x', token: 't', requestTimeoutMs: -1 })).toThrow(
      /requestTimeoutMs/,
    );
    expect(() => new Client({ url: 'http://x', token: 't', callStream: 'yes' as never })).toThrow(
      /^callStream must be a boolean/,
    );
  });
});

describe('Client call stream, against servers that do not upgrade', () => {
  it('asks once, then sends every call over HTTP; reads and other routes never ask', async () => {
    const { url, seen } = await serve((req, _body, res) => {
      if (req.url === '/v1/tasks' && req.method === 'POST') return json(res, 201, { task: { id: 't1' } });
      if (req.url === '/v1/tasks/t1') return json(res, 200, { task: { id: 't1' } });
      json(res, 404, { error: { code: 'not_found', message: 'no' } });
    });
    const client = new Client({ url, token: 'secret' });
    await client.getTask('t1');
    expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /v1/tasks/t1']);
    for (let i = 0; i < 3; i++) await client.createTask({ type: 'x' });
    expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /v1/tasks/t1',
      'GET /v1/calls',
      'POST /v1/tasks',
      'POST /v1/tasks',
      'POST /v1/tasks',
    ]);
    expect(seen[1]!.headers.upgrade).toBe('rouse-calls.v1');
    expect(seen[1]!.headers.authorization).toBe('Bearer secret');
  });

  it('a refused token or a coordinator shutting down is not taken for "no upgrades": it asks again', async () => {
    let upgrades = 0;
    const { url } = await serve((req, _body, res) => {
      if (req.url === '/v1/calls') {
        upgrades++;
        return json(res, upgrades === 1 ? 503 : 401, { error: { code: 'unavailable', message: 'x' } });
      }
      json(res, 201, { task: { id: 't1' } });
    });
    const client = new Client({ url, token: 't' });
    await client.createTask({ type: 'x' });
    await client.createTask({ type: 'x' });
    await client.createTask({ type: 'x' });
    expect(upgrades).toBe(3);
  });

  it('a server that never answers the upgrade times the call out like HTTP would', async () => {
    const { url } = await serve(() => {});
    const client = new Client({ url, token: 't', requestTimeoutMs: 50, retry: { attempts: 1 } });
    const err = await client.createTask({ type: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RouseNetworkError);
    expect((err as RouseNetworkError).code).toBe('timeout');
  });
});
