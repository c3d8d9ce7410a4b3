/**
 * The SDK's call stream against a real `rouse serve` process: the hot calls ride one upgraded
 * connection and answer as HTTP does; a coordinator (or proxy) that does not upgrade is served over
 * HTTP; a stream lost with the coordinator (SIGKILL) fails its calls as a lost connection and the next
 * call, after the restart, opens a new one; an idle stream never keeps a process alive.
 */
import { spawnSync } from 'node:child_process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Client, RouseApiError, RouseNetworkError } from '@rouse/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CoordinatorProcess, startCoordinatorProcess } from '../harness/coordinator-process.js';

let coord: CoordinatorProcess;
const cleanups: (() => unknown)[] = [];
beforeEach(async () => {
  coord = await startCoordinatorProcess();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await coord.kill();
});

async function metric(name: string): Promise<string[]> {
  const res = await fetch(`${coord.url}/metrics`, {
    headers: { authorization: `Bearer ${coord.adminToken}` },
  });
  return (await res.text()).split('\n').filter((l) => l.startsWith(name));
}

async function openStreams(): Promise<number> {
  const [line] = await metric('rouse_call_streams');
  return Number(line?.split(' ')[1]);
}

/** A reverse proxy that forwards plain HTTP and answers every upgrade 404, as a proxy without upgrades. */
async function noUpgradeProxy(target: string): Promise<{ url: string; upgrades: number }> {
  const state = { url: '', upgrades: 0 };
  const server: Server = createServer((req, res) => {
    const up = httpRequest(`${target}${req.url}`, { method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    req.pipe(up);
  });
  server.on('upgrade', (_req, socket: Socket) => {
    state.upgrades++;
    socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cleanups.push(() => new Promise((r) => server.close(r)));
  return state;
}

describe('call stream (SDK)', () => {
  it('carries creates, claims and completions over one stream, with HTTP answers and errors', async () => {
    const admin = new Client({ url: coord.url, token: coord.adminToken });
    const viaHttp = new Client({ url: coord.url, token: coord.adminToken, callStream: false });
    cleanups.push(
      () => admin.close(),
      () => viaHttp.close(),
    );
    const one = await admin.createTask({ type: 'cs', payload: { n: 1 }, idempotencyKey: 'k' });
    expect(await openStreams()).toBe(1);
    // The same create over HTTP is the same task, deduplicated; and back over the stream too.
    const again = await viaHttp.createTask({ type: 'cs', payload: { n: 1 }, idempotencyKey: 'k' });
    expect(again).toEqual({ ...one, deduplicated: true });
    expect(await admin.createTask({ type: 'cs', payload: { n: 1 }, idempotencyKey: 'k' })).toEqual(again);
    await admin.createTasks([{ type: 'cs' }, { type: 'cs' }]);

    const reg = await new Client({ url: coord.url, token: coord.agentToken }).registerAgent({
      agentType: 'cs',
      name: 'w',
      taskTypes: ['cs'],
    });
    const agent = admin.withToken(reg.token);
    const { tasks } = await agent.claim(reg.agent.id, { types: ['cs'], max: 3, start: true });
    expect(tasks).toHaveLength(3);
    for (const t of tasks) await agent.completeTask(t.id, { version: t.version, result: { ok: t.id } });
    expect(await openStreams()).toBe(2); // the admin's and the agent's token: one stream each
    const err = await agent.completeTask(tasks[0]!.id, { version: 0, result: null }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RouseApiError);
    expect((err as RouseApiError).status).toBe(409);
    expect((err as RouseApiError).code).toBe('stale_version');
    expect((await viaHttp.getTask(tasks[0]!.id)).status).toBe('completed');
    const completes = await metric('rouse_http_requests_total{method="POST",route="/v1/tasks/:id/complete"');
    expect(completes.join('\n')).toMatch(/status="200"} 3/);
  });

  it('falls back to HTTP for good when the coordinator is behind a proxy that does not upgrade', async () => {
    const proxy = await noUpgradeProxy(coord.url);
    const client = new Client({ url: proxy.url, token: coord.adminToken });
    cleanups.push(() => client.close());
    for (let i = 0; i < 5; i++) await client.createTask({ type: 'cs', payload: { i } });
    expect(proxy.upgrades).toBe(1);
    expect(await openStreams()).toBe(0);
    expect((await client.listTasks({ type: 'cs' })).tasks).toHaveLength(5);
  });

  it('a stream lost with its coordinator fails the call in flight; after the restart a new stream serves', async () => {
    const admin = new Client({ url: coord.url, token: coord.adminToken, retry: { attempts: 1 } });
    cleanups.push(() => admin.close());
    const reg = await new Client({ url: coord.url, token: coord.agentToken }).registerAgent({
      agentType: 'cs',
      name: 'lp',
      taskTypes: ['cs'],
    });
    const agent = admin.withToken(reg.token);
    const waiting = agent
      .claim(reg.agent.id, { types: ['cs'], max: 1, waitMs: 20_000 })
      .catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 300));
    await coord.kill('SIGKILL');
    const err = await waiting;
    expect(err).toBeInstanceOf(RouseNetworkError);
    await coord.restart();
    const created = await admin.createTask({ type: 'cs' });
    expect(created.task.status).toBe('created');
    expect(await openStreams()).toBe(1);
  });

  it('an idle stream does not keep the process alive (no close())', () => {
    const sdk = fileURLToPath(new URL('../../packages/sdk/dist/index.js', import.meta.url));
    const script = `
      const { Client } = await import(${JSON.stringify(sdk)});
      const c = new Client({ url: ${JSON.stringify(coord.url)}, token: ${JSON.stringify(coord.adminToken)} });
      await c.createTask({ type: 'cs' });
      console.log('created');`;
    const started = Date.now();
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(run.stdout.trim()).toBe('created');
    expect(run.status).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
