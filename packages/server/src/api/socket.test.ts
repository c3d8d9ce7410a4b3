/** Over a real socket: the paths that matter end to end (long-poll, SSE, lifecycle, shutdown). */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RouseServer, startRouseServer } from '../server.js';
import type { ApiLimits } from './limits.js';

let dir: string;
let server: RouseServer;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rouse-sock-'));
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

/** The response fields these tests read (the assertions check them). */
interface Body {
  agent: { id: string };
  token: string;
  task: { id: string; status: string; version: number };
  tasks: { id: string; version: number; ok?: boolean }[];
}

async function call(
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; body: Body }> {
  const res = await fetch(server.url + path, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Body };
}

interface SseFrame {
  event: string;
  data: { type: string; task?: { id: string; status: string }; event?: { to: string } };
}

/** Open an SSE stream and collect its frames until `until` holds for the collected list. */
function openEvents(token: string) {
  const frames: SseFrame[] = [];
  const controller = new AbortController();
  const waiters: { test: () => boolean; resolve: () => void }[] = [];
  const ready = fetch(`${server.url}/v1/events`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    signal: controller.signal,
  }).then(async (res) => {
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    void (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buffer += decoder.decode(value, { stream: true });
          let end = buffer.indexOf('\n\n');
          while (end >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const event = /^event: (.*)$/m.exec(block)?.[1];
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (event && data) frames.push({ event, data: JSON.parse(data) });
            for (const w of waiters.filter((w) => w.test())) w.resolve();
            end = buffer.indexOf('\n\n');
          }
        }
      } catch {
        // aborted by the test
      }
    })();
  });
  return {
    frames,
    ready,
    until(test: (f: SseFrame[]) => boolean): Promise<void> {
      if (test(frames)) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ test: () => test(frames), resolve }));
    },
    close: () => controller.abort(),
  };
}

/** A server of its own (in memory) with these limits, and a JSON POST to it that returns the answer's body. */
async function ownServer(name: string, limits: ApiLimits) {
  const s = await startRouseServer({
    port: 0,
    dataDir: join(dir, name),
    db: ':memory:',
    logger: pino({ level: 'silent' }),
    limits,
  });
  const post = async <T = unknown>(path: string, token: string, body: unknown): Promise<T> => {
    const res = await fetch(s.url + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return (await res.json()) as T;
  };
  return { s, post };
}

describe('over a real socket', () => {
  it('create → long-poll claim woken by create → start → heartbeat → complete, seen on /v1/events', async () => {
    const events = openEvents(server.readonlyToken);
    await events.ready;
    const reg = await call('POST', '/v1/agents', server.agentToken, { agentType: 'w', taskTypes: ['echo'] });
    expect(reg.status).toBe(201);
    const { agent, token } = reg.body;

    const claim = call('POST', `/v1/agents/${agent.id}/claim`, token, { types: ['echo'], waitMs: 20_000 });
    await new Promise((r) => setTimeout(r, 100));
    const created = await call('POST', '/v1/tasks', server.adminToken, { type: 'echo', payload: { n: 1 } });
    expect(created.status).toBe(201);
    const claimed = await claim;
    expect(claimed.status).toBe(200);
    const task = claimed.body.tasks[0]!;
    expect(task.id).toBe(created.body.task.id);

    expect((await call('POST', `/v1/tasks/${task.id}/start`, token, { version: task.version })).status).toBe(
      200,
    );
    const beat = await call('POST', `/v1/agents/${agent.id}/heartbeat`, token, {
      tasks: [{ taskId: task.id, version: task.version, progress: 0.5 }],
    });
    expect(beat.body.tasks[0]?.ok).toBe(true);
    const done = await call('POST', `/v1/tasks/${task.id}/complete`, token, {
      version: task.version,
      result: 'ok',
    });
    expect(done.body.task.status).toBe('completed');

    await events.until((f) =>
      f.some((e) => e.event === 'task.transition' && e.data.event?.to === 'completed'),
    );
    const types = events.frames.map((f) => f.event);
    expect(types).toContain('task.created');
    expect(types).toContain('task.transition');
    const created_ = events.frames.find((f) => f.event === 'task.created');
    expect(created_?.data).toMatchObject({ type: 'task.created', task: { id: task.id } });
    expect(events.frames.filter((f) => f.event === 'task.transition').map((f) => f.data.event?.to)).toEqual(
      expect.arrayContaining(['claimed', 'running', 'completed']),
    );
    events.close();
  });

  it('follows logs as SSE while the task runs and ends when it completes', async () => {
    const reg = await call('POST', '/v1/agents', server.agentToken, { agentType: 'w', taskTypes: ['echo'] });
    const { agent, token } = reg.body;
    await call('POST', '/v1/tasks', server.adminToken, { type: 'echo' });
    const task = (await call('POST', `/v1/agents/${agent.id}/claim`, token, { types: ['echo'], start: true }))
      .body.tasks[0]!;
    const res = await fetch(`${server.url}/v1/tasks/${task.id}/logs`, {
      headers: { authorization: `Bearer ${server.adminToken}`, accept: 'text/event-stream' },
    });
    const text = res.text();
    await call('POST', `/v1/tasks/${task.id}/logs`, token, {
      version: task.version,
      lines: [{ text: 'first' }],
    });
    await new Promise((r) => setTimeout(r, 50));
    await call('POST', `/v1/tasks/${task.id}/logs`, token, {
      version: task.version,
      lines: [{ text: 'second' }],
    });
    await call('POST', `/v1/tasks/${task.id}/complete`, token, { version: task.version });
    const body = await text;
    expect(body.indexOf('"text":"first"')).toBeGreaterThan(0);
    expect(body.indexOf('"text":"second"')).toBeGreaterThan(body.indexOf('"text":"first"'));
    expect(body).toContain(': end: task');
  });

  it('close() releases a pending long-poll and an open event stream quickly', async () => {
    const reg = await call('POST', '/v1/agents', server.agentToken, { agentType: 'w', taskTypes: ['none'] });
    const { agent, token } = reg.body;
    const events = openEvents(server.adminToken);
    await events.ready;
    const claim = fetch(`${server.url}/v1/agents/${agent.id}/claim`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ types: ['none'], waitMs: 60_000 }),
    }).then(
      async (r) => ({ status: r.status, body: (await r.json()) as { tasks?: unknown[] } | null }),
      () => ({ status: 0, body: null }),
    );
    await new Promise((r) => setTimeout(r, 100));
    const started = performance.now();
    await server.close();
    await server.close(); // idempotent
    expect(performance.now() - started).toBeLessThan(5000);
    const result = await claim;
    if (result.status === 200) expect(result.body?.tasks).toEqual([]);
    else expect(result.status).toBe(0);
    events.close();
  });

  it('a client that goes away frees its long-poll and its event stream', async () => {
    const reg = await call('POST', '/v1/agents', server.agentToken, { agentType: 'w', taskTypes: ['none'] });
    const { agent, token } = reg.body;
    const gauge = async (name: string): Promise<number> => {
      const text = await (
        await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.adminToken}` } })
      ).text();
      return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
    };
    const until = async (name: string, value: number) => {
      for (let i = 0; i < 100 && (await gauge(name)) !== value; i++)
        await new Promise((r) => setTimeout(r, 20));
      expect(await gauge(name)).toBe(value);
    };
    const poll = new AbortController();
    const pending = fetch(`${server.url}/v1/agents/${agent.id}/claim`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ types: ['none'], waitMs: 60_000 }),
      signal: poll.signal,
    }).catch(() => null);
    const events = openEvents(server.adminToken);
    await events.ready;
    await until('rouse_claim_waiters', 1);
    await until('rouse_sse_clients', 1);
    poll.abort();
    events.close();
    await pending;
    await until('rouse_claim_waiters', 0);
    await until('rouse_sse_clients', 0);
  });

  it("ends an agent's event and log streams once its token is revoked; a read-only reader's stays", async () => {
    const { s, post } = await ownServer('revoked', { sseRecheckMs: 30 });
    const controller = new AbortController();
    try {
      const registered = await post<{ token: string }>('/v1/agents', s.agentToken, {
        agentType: 'w',
        key: 'w-1',
      });
      const task = await post<{ task: { id: string } }>('/v1/tasks', s.adminToken, { type: 'other' });
      const open = async (path: string, token: string) => {
        const res = await fetch(s.url + path, {
          headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
          signal: controller.signal,
        });
        expect(res.status).toBe(200);
        return res.body!.getReader();
      };
      /** Everything the stream sends until it ends (bounded by the test's timeout). */
      const readAll = async (reader: ReadableStreamDefaultReader<Uint8Array>) => {
        let text = '';
        for (let r = await reader.read(); !r.done; r = await reader.read())
          text += new TextDecoder().decode(r.value);
        return text;
      };
      const events = await open('/v1/events', registered.token);
      const logs = await open(`/v1/tasks/${task.task.id}/logs`, registered.token);
      const reader = await open('/v1/events', s.readonlyToken);
      // Registered again under its key: the first incarnation's token is revoked.
      await post('/v1/agents', s.agentToken, { agentType: 'w', key: 'w-1' });
      for (const text of await Promise.all([readAll(events), readAll(logs)])) {
        expect(text).toMatch(/^: connected\n\n/);
        expect(text).toContain(': closed: the token or session that opened this stream is no longer valid');
      }
      // The read-only stream still hears what happens.
      await post('/v1/tasks', s.adminToken, { type: 'later' });
      let text = '';
      while (!text.includes('"type":"later"')) text += new TextDecoder().decode((await reader.read()).value);
      expect(text).not.toContain('closed:');
    } finally {
      controller.abort();
      await s.close();
    }
  });

  it('follows a long log to its end at the pace of a slow reader, past the buffer bound', async () => {
    const { s, post } = await ownServer('long-log', { sseMaxBufferedBytes: 256 * 1024 });
    const controller = new AbortController();
    try {
      const reg = await post<Body>('/v1/agents', s.agentToken, { agentType: 'w', taskTypes: ['echo'] });
      await post('/v1/tasks', s.adminToken, { type: 'echo' });
      const claimed = await post<Body>(`/v1/agents/${reg.agent.id}/claim`, reg.token, {
        types: ['echo'],
        start: true,
      });
      const task = claimed.tasks[0]!;
      // 40,000 one-byte lines: about 4 MB of events, more than loopback's buffers and the 256 KiB bound.
      const LINES = 40_000;
      for (let i = 0; i < LINES; i += 1000) {
        const lines = Array.from({ length: 1000 }, (_, j) => ({ text: String((i + j) % 10) }));
        await post(`/v1/tasks/${task.id}/logs`, reg.token, { version: task.version, lines });
      }
      await post(`/v1/tasks/${task.id}/complete`, reg.token, { version: task.version });
      const res = await fetch(`${s.url}/v1/tasks/${task.id}/logs`, {
        headers: { authorization: `Bearer ${s.adminToken}`, accept: 'text/event-stream' },
        signal: controller.signal,
      });
      const reader = res.body!.getReader();
      await new Promise((r) => setTimeout(r, 300)); // the server writes while nobody reads
      let text = '';
      for (let r = await reader.read(); !r.done; r = await reader.read())
        text += new TextDecoder().decode(r.value);
      expect(text.match(/^event: log$/gm)?.length).toBe(LINES);
      expect(text).toContain(`id: ${LINES}\n`);
      expect(text).toMatch(/: end: task \S+ is completed\n\n$/);
    } finally {
      controller.abort();
      await s.close();
    }
  });

  it('sends keep-alive comments on an idle event stream', async () => {
    const quiet = await startRouseServer({
      port: 0,
      dataDir: join(dir, 'quiet'),
      db: ':memory:',
      logger: pino({ level: 'silent' }),
      limits: { sseKeepAliveMs: 30 },
    });
    try {
      const controller = new AbortController();
      const res = await fetch(`${quiet.url}/v1/events`, {
        headers: { authorization: `Bearer ${quiet.readonlyToken}` },
        signal: controller.signal,
      });
      const reader = res.body!.getReader();
      let text = '';
      while (!text.includes(': keep-alive')) text += new TextDecoder().decode((await reader.read()).value);
      expect(text).toMatch(/^: connected\n\n/);
      controller.abort();
    } finally {
      await quiet.close();
    }
  });
});
