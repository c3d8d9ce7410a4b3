/**
 * A command loads what it uses: help, usage errors and the client commands run without loading the
 * server's heavy dependencies (fastify, pg, better-sqlite3) or the server itself. The real `rouse`
 * binary runs as a child process under `--import test/fixtures/record-modules.mjs`, which writes down
 * every module it loads; client commands talk to a stub HTTP server.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, ROUSE_BIN } from './run-cli.js';

const RECORDER = fileURLToPath(new URL('../fixtures/record-modules.mjs', import.meta.url));

/** A module of the server side: a dependency only it needs, or the server's own code. */
const HEAVY = [
  /\/node_modules\/fastify\//,
  /\/node_modules\/pg\//,
  /\/node_modules\/better-sqlite3\//,
  /\/packages\/server\/dist\/(server|server-store)\.js$/,
  /\/packages\/server\/dist\/(api|services|store)\//,
];

let dir: string;
let stub: Server;
let stubUrl: string;
const requests: string[] = [];
let runs = 0;

interface RecordedRun {
  code: number | null;
  stdout: string;
  stderr: string;
  modules: string[];
}

/** Run `rouse ...args` recording the modules it loads. */
async function recorded(args: string[]): Promise<RecordedRun> {
  const file = join(dir, `modules-${++runs}.txt`);
  const child = spawn(process.execPath, ['--import', RECORDER, ROUSE_BIN, ...args], {
    cwd: dir,
    env: cleanEnv({ RECORD_MODULES_FILE: file }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`rouse ${args.join(' ')} did not exit within 20 s\n${stdout}\n${stderr}`));
    }, 20_000);
    child.on('close', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  const modules = (await readFile(file, 'utf8')).split('\n').filter(Boolean);
  return { code, stdout, stderr, modules };
}

const heavyIn = (modules: string[]): string[] => modules.filter((m) => HEAVY.some((re) => re.test(m)));

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rouse-lazy-'));
  // Answers `GET /v1/tasks` with an empty page and everything else with not_found.
  stub = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => {
      const empty = req.method === 'GET' && req.url?.startsWith('/v1/tasks?');
      res.writeHead(empty ? 200 : 404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          empty ? { tasks: [], nextCursor: null } : { error: { code: 'not_found', message: 'no such task' } },
        ),
      );
    });
  });
  await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
  stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => stub.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

describe('which modules a command loads', () => {
  it('the recorder sees the heavy modules when a command does load them (rouse serve), and serve loads no SDK', async () => {
    // serve's action loads the server, then refuses the store: exit 2 before listening
    const r = await recorded(['serve', '--store', 'nope://x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--store must be a postgres:\/\/ URL/);
    const heavy = heavyIn(r.modules);
    expect(heavy.some((m) => m.includes('/node_modules/fastify/'))).toBe(true);
    expect(heavy.some((m) => m.includes('/node_modules/better-sqlite3/'))).toBe(true);
    // the server does not need the HTTP client
    expect(r.modules.filter((m) => m.includes('/packages/sdk/'))).toEqual([]);
  });

  it('help and usage errors load neither the server nor the HTTP client', async () => {
    for (const args of [
      ['--help'],
      ['tasks', '--help'],
      ['serve', '--help'],
      ['migrate', '--help'],
      ['demo', '--help'],
      ['submit', 'x', '--no-such-flag'],
    ]) {
      const r = await recorded(args);
      expect(r.code, `rouse ${args.join(' ')}`).toBe(args.includes('--help') ? 0 : 2);
      expect(r.modules.some((m) => m.endsWith('/packages/server/dist/cli/main.js'))).toBe(true);
      expect(heavyIn(r.modules), `rouse ${args.join(' ')}`).toEqual([]);
      expect(r.modules.filter((m) => m.includes('/packages/sdk/'))).toEqual([]);
    }
  });

  it('client commands talk to the coordinator without loading the server', async () => {
    const conn = ['--url', stubUrl, '--token', 'stub-token'];
    const tasks = await recorded(['tasks', ...conn]);
    expect(tasks.stdout).toContain('no tasks match');
    expect(tasks.code).toBe(0);
    expect(heavyIn(tasks.modules)).toEqual([]);
    expect(tasks.modules.some((m) => m.endsWith('/packages/server/dist/cli/actions/tasks.js'))).toBe(true);

    const id = 'tsk_stub';
    for (const args of [
      ['show', id],
      ['why', id],
      ['logs', id],
      ['agents'],
      ['cancel', id],
      ['retry', id],
      ['submit', 'stub-type', '{"n":1}'],
      ['dashboard'],
    ]) {
      const r = await recorded([...args, ...conn]);
      // the stub answered not_found: the command ran up to its request
      expect(r.stderr, `rouse ${args.join(' ')}`).toMatch(/\(not_found\)/);
      expect(r.code).toBe(1);
      expect(heavyIn(r.modules), `rouse ${args.join(' ')}`).toEqual([]);
    }
    expect(requests).toContain('GET /v1/agents');
    expect(requests).toContain('POST /v1/tasks');
  });
});
