/**
 * Answers made before any route runs (Node's parser, Fastify's router) and `HEAD` requests, over
 * real sockets with raw request bytes: every refusal is a complete answer in the protocol's error
 * shape, and `HEAD` on an event stream answers at once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RouseServer, startRouseServer } from '../server.js';
import { RawConnection, type RawResponse, requestHead } from '../test-support/raw-http.js';
import { MAX_PATH_PARAM_BYTES } from './limits.js';

let dir: string;
let server: RouseServer;
let taskId: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rouse-wire-'));
  server = await startRouseServer({
    port: 0,
    dataDir: dir,
    db: ':memory:',
    logger: pino({ level: 'silent' }),
  });
  const created = await fetch(`${server.url}/v1/tasks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ type: 't' }),
  });
  taskId = ((await created.json()) as { task: { id: string } }).task.id;
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

/** Send raw bytes on a fresh connection and read one response. */
async function exchange(bytes: string | Buffer, options: { head?: boolean } = {}) {
  const conn = await RawConnection.open(server.port);
  conn.write(bytes);
  const res = await conn.response(options);
  return { conn, res };
}

/** A refusal in the protocol's shape; returns its details. */
function expectRefusal(res: RawResponse, status: number, code: string): Record<string, unknown> {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(res.body) as { error: { code: string; details: Record<string, unknown> } };
  expect(body).toEqual({ error: { code, message: expect.any(String), details: expect.any(Object) } });
  return body.error.details;
}

/** The answer was complete, announced the close, and the close was clean. */
async function expectCleanClose(conn: RawConnection, res: RawResponse) {
  expect(res.headers.connection?.toLowerCase()).toBe('close');
  expect(await conn.closed()).toEqual({ error: null, ended: true });
}

const auth = () => ({ authorization: `Bearer ${server.adminToken}` });

describe("refused by Node's parser (clientError)", () => {
  it('431 for an oversized request head: payload_too_large naming the part and the limit', async () => {
    for (const [what, head] of [
      ['a huge header', requestHead('GET', '/healthz', { 'x-big': 'a'.repeat(20_000) })],
      ['a huge URL', requestHead('GET', `/v1/tasks?type=${'a'.repeat(20_000)}`, auth())],
      ['a head that keeps coming', requestHead('GET', '/healthz', { 'x-big': 'b'.repeat(256 * 1024) })],
    ] as const) {
      const { conn, res } = await exchange(head);
      const details = expectRefusal(res, 431, 'payload_too_large');
      expect(details, what).toEqual({ part: 'request head', limitBytes: expect.any(Number) });
      await expectCleanClose(conn, res);
    }
  });

  it('400 validation_failed for an invalid Content-Length, naming the header', async () => {
    for (const value of ['abc', '-1', '1.5', '99999999999999999999999']) {
      const { conn, res } = await exchange(
        `POST /v1/tasks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${value}\r\n\r\n{}`,
      );
      const details = expectRefusal(res, 400, 'validation_failed');
      expect(details.issues, value).toEqual([expect.objectContaining({ path: 'headers.content-length' })]);
      await expectCleanClose(conn, res);
    }
  });

  it('400 validation_failed for a malformed request line, a bad header, or both length headers', async () => {
    for (const bytes of [
      'GET\r\n\r\n',
      'GET / HTTP/9.9\r\nHost: x\r\n\r\n',
      '\x00\x01\x02 nonsense\r\n\r\n',
      'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n',
      'POST /v1/tasks HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}',
      'POST /v1/tasks HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
    ]) {
      const { conn, res } = await exchange(bytes);
      expectRefusal(res, 400, 'validation_failed');
      await expectCleanClose(conn, res);
    }
  });

  it('a missing Host, an unknown Expect and CONNECT are answered in the same shape', async () => {
    const noHost = await exchange('GET /healthz HTTP/1.1\r\n\r\n');
    expect(expectRefusal(noHost.res, 400, 'validation_failed').issues).toEqual([
      expect.objectContaining({ path: 'headers.host' }),
    ]);
    noHost.conn.destroy();
    const expectation = await exchange(requestHead('GET', '/healthz', { expect: 'something' }));
    expectRefusal(expectation.res, 417, 'validation_failed');
    await expectCleanClose(expectation.conn, expectation.res);
    const connect = await exchange('CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n');
    expectRefusal(connect.res, 405, 'method_not_allowed');
    await expectCleanClose(connect.conn, connect.res);
  });
});

describe("refused by Fastify's router", () => {
  it('414 payload_too_large for an over-long path id, socket and inject', async () => {
    const path = `/v1/tasks/${'a'.repeat(MAX_PATH_PARAM_BYTES + 1)}`;
    const { conn, res } = await exchange(requestHead('GET', path, auth()));
    expect(expectRefusal(res, 414, 'payload_too_large')).toEqual({
      part: 'path parameter',
      limitBytes: MAX_PATH_PARAM_BYTES,
    });
    conn.destroy();
    const injected = await server.app.inject({ method: 'GET', url: path, headers: auth() });
    expect(injected.statusCode).toBe(414);
    expect(injected.json().error).toMatchObject({ code: 'payload_too_large' });
    // At the limit, the id is only unknown.
    const atLimit = `/v1/tasks/${'a'.repeat(MAX_PATH_PARAM_BYTES)}`;
    expect((await server.app.inject({ method: 'GET', url: atLimit, headers: auth() })).statusCode).toBe(404);
  });

  it('400 validation_failed for a path that is not valid percent-encoding, socket and inject', async () => {
    for (const path of ['/v1/tasks/%ff', '/v1/agents/%c3%28', '/v1/dependencies/%E0%A4%A/reports']) {
      const method = path.endsWith('reports') ? 'POST' : 'GET';
      const { conn, res } = await exchange(requestHead(method, path, auth()));
      expect(expectRefusal(res, 400, 'validation_failed').issues, path).toEqual([
        expect.objectContaining({ path: 'path' }),
      ]);
      // Nothing was left unread: the connection stays usable.
      conn.write(requestHead('GET', '/healthz', {}));
      expect((await conn.response()).status).toBe(200);
      conn.destroy();
      const injected = await server.app.inject({ method, url: path, headers: auth() });
      expect(injected.statusCode, path).toBe(400);
      expect(injected.json().error.code).toBe('validation_failed');
    }
  });
});

describe('while the app closes', () => {
  it('a request arriving on an open connection is 503 unavailable in the error shape, marked not applied', async () => {
    const closing = await startRouseServer({
      port: 0,
      dataDir: join(dir, 'closing'),
      db: ':memory:',
      logger: pino({ level: 'silent' }),
    });
    try {
      const reg = await fetch(`${closing.url}/v1/agents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${closing.agentToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ agentType: 'w', taskTypes: ['none'] }),
      }).then((r) => r.json() as Promise<{ agent: { id: string }; token: string }>);
      const conn = await RawConnection.open(closing.port);
      // A long-poll keeps the connection busy, so closing the app does not drop it as idle.
      const claim = JSON.stringify({ types: ['none'], waitMs: 1000 });
      conn.write(
        requestHead('POST', `/v1/agents/${reg.agent.id}/claim`, {
          authorization: `Bearer ${reg.token}`,
          'content-type': 'application/json',
          'content-length': claim.length,
        }) + claim,
      );
      await new Promise((r) => setTimeout(r, 100));
      const appClosed = closing.app.close();
      // The server stops listening once the app's preClose hooks ran.
      for (let i = 0; i < 200 && closing.app.server.listening; i++)
        await new Promise((r) => setTimeout(r, 10));
      expect(closing.app.server.listening).toBe(false);
      conn.write(requestHead('GET', '/v1/tasks', { authorization: `Bearer ${closing.adminToken}` }));
      expect((await conn.response()).status).toBe(200);
      const refused = await conn.response();
      // Refused before anything was done: the SDK sends even a create without a key again.
      expect(expectRefusal(refused, 503, 'unavailable')).toEqual({ applied: false });
      await expectCleanClose(conn, refused);
      await appClosed;
    } finally {
      await closing.close();
    }
  });
});

describe('HEAD', () => {
  const sseRoutes = () => [
    { path: '/v1/events', accept: 'text/event-stream' },
    { path: '/v1/events', accept: '*/*' },
    { path: `/v1/tasks/${taskId}/logs`, accept: 'text/event-stream' },
  ];

  it('on an event stream: the stream status and content type, no body, at once; the connection stays usable', async () => {
    for (const r of sseRoutes()) {
      const conn = await RawConnection.open(server.port);
      conn.write(requestHead('HEAD', r.path, { ...auth(), accept: r.accept }));
      const res = await conn.response({ head: true, timeoutMs: 3000 });
      expect(res.status, r.path).toBe(200);
      expect(res.headers['content-type'], r.path).toMatch(/^text\/event-stream/);
      expect(res.body).toBe('');
      conn.write(requestHead('GET', '/healthz', {}));
      const next = await conn.response();
      expect(next.status, `after HEAD ${r.path}`).toBe(200);
      expect(next.body).toBe('{"ok":true}');
      conn.destroy();
    }
  });

  it('on an event stream through inject', async () => {
    for (const r of sseRoutes()) {
      const res = await within(
        3000,
        server.app.inject({ method: 'HEAD', url: r.path, headers: { ...auth(), accept: r.accept } }),
      );
      expect(res.statusCode, r.path).toBe(200);
      expect(res.headers['content-type'], r.path).toMatch(/^text\/event-stream/);
      expect(res.body).toBe('');
    }
  });

  it('on every GET route of the route table: the GET status and content type, no body (inject)', async () => {
    // A task holding an uploaded blob, so the result route streams one.
    const agent = (await (
      await fetch(`${server.url}/v1/agents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.agentToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ agentType: 'w', taskTypes: ['blob'] }),
      })
    ).json()) as { agent: { id: string }; token: string };
    const asAgent = { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' };
    await fetch(`${server.url}/v1/tasks`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'blob' }),
    });
    const claimed = (await (
      await fetch(`${server.url}/v1/agents/${agent.agent.id}/claim`, {
        method: 'POST',
        headers: asAgent,
        body: JSON.stringify({ types: ['blob'], start: true }),
      })
    ).json()) as { tasks: { id: string; version: number }[] };
    const held = claimed.tasks[0]!;
    const uploaded = await fetch(`${server.url}/v1/tasks/${held.id}/result?version=${held.version}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'text/csv' },
      body: 'a,b\n1,2\n',
    });
    expect(uploaded.status).toBe(200);

    const doc = (
      await server.app.inject({ method: 'GET', url: '/v1/openapi.json', headers: auth() })
    ).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    const ids: Record<string, string> = { id: held.id, agentId: agent.agent.id, name: 'openai' };
    const gets = Object.entries(doc.paths)
      .filter(([, item]) => 'get' in item)
      .map(([path]) => path.replace(/\{(\w+)\}/g, (_, name: string) => ids[name] ?? 'x'));
    expect(gets).toContain(`/v1/tasks/${held.id}/result`);
    for (const url of gets) {
      const head = await within(3000, server.app.inject({ method: 'HEAD', url, headers: auth() }));
      expect(head.body, url).toBe('');
      if (url === '/v1/events') {
        expect(head.statusCode).toBe(200);
        expect(head.headers['content-type']).toMatch(/^text\/event-stream/);
        continue;
      }
      const get = await server.app.inject({ method: 'GET', url, headers: auth() });
      expect(head.statusCode, url).toBe(get.statusCode);
      expect(head.headers['content-type'], url).toBe(get.headers['content-type']);
    }
  });

  it('refused on an event stream: the refusal status and JSON type, no body', async () => {
    const conn = await RawConnection.open(server.port);
    conn.write(requestHead('HEAD', '/v1/events', {}));
    const res = await conn.response({ head: true });
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    conn.destroy();
  });
});

function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
