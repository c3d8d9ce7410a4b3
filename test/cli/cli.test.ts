/**
 * The `rouse` CLI end to end: a real `rouse serve --port 0` child process with a temp data dir, and
 * every client command run as its own child process, finding the server through ./.rouse/server.json.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Task } from '@rouse/protocol';
import { Client, resolveWorkerOptions } from '@rouse/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../harness/wait.js';
import { bannerOf, type CliResult, ROUSE_BIN, runCli, spawnCli, waitForExit } from './run-cli.js';

let dir: string; // cwd of every command; the server's data dir is <dir>/.rouse
let emptyDir: string; // a directory with no server
let server: ChildProcess;
let serverOut = '';
let serverErr = '';
let url: string;
let adminToken: string;
let enrollToken: string;

const rouse = (...args: string[]): Promise<CliResult> => runCli(args, { cwd: dir });
const json = <T>(r: CliResult): T => {
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as T;
};

async function waitForServerJson(file: string, timeoutMs: number): Promise<{ url: string; pid: number }> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      return JSON.parse(await readFile(file, 'utf8'));
    } catch {
      if (Date.now() > until || server.exitCode !== null) {
        throw new Error(`rouse serve did not write ${file}\nstdout: ${serverOut}\nstderr: ${serverErr}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** An agent, registered with the SDK client, that holds one task of `type`. */
async function claimAs(name: string, type: string): Promise<{ agent: Client; agentId: string; task: Task }> {
  const enroll = new Client({ url, token: enrollToken });
  const reg = await enroll.registerAgent({ agentType: 'cli-test', name, taskTypes: [type] });
  const agent = enroll.withToken(reg.token);
  const res = await agent.claim(reg.agent.id, { types: [type], max: 1, waitMs: 10_000 });
  const task = res.tasks[0];
  if (!task) throw new Error(`${name} claimed nothing of type ${type}`);
  await agent.startTask(task.id, task.version);
  return { agent, agentId: reg.agent.id, task };
}

/** The coordinator's count of call streams opened since it started. */
async function streamsOpened(): Promise<number> {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } });
  const m = /^rouse_call_streams_opened_total(?:\{\})? (\d+)$/m.exec(await res.text());
  if (!m) throw new Error('no rouse_call_streams_opened_total in /metrics');
  return Number(m[1]);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rouse-cli-'));
  emptyDir = await mkdtemp(join(tmpdir(), 'rouse-cli-empty-'));
  server = spawnCli(['serve', '--port', '0'], { cwd: dir });
  server.stdout?.on('data', (d) => {
    serverOut += d;
  });
  server.stderr?.on('data', (d) => {
    serverErr += d;
  });
  ({ url } = await waitForServerJson(join(dir, '.rouse', 'server.json'), 15_000));
  // server.json is written as soon as the coordinator listens; the banner follows it
  await waitFor(() => serverErr.includes('Press Ctrl-C to stop.'), { what: 'the banner on stderr' });
  adminToken = (await readFile(join(dir, '.rouse', 'admin.token'), 'utf8')).trim();
  enrollToken = (await readFile(join(dir, '.rouse', 'agent.token'), 'utf8')).trim();
});

afterAll(async () => {
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await waitForExit(server);
  }
  await rm(dir, { recursive: true, force: true });
  await rm(emptyDir, { recursive: true, force: true });
});

describe('rouse serve', () => {
  it('prints a banner with the URL and where the tokens are, never their values', () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(url).not.toMatch(/:7070$/);
    // stdout is not a TTY: logs are JSON lines there, the banner goes to stderr
    expect(serverErr).toContain(url);
    expect(serverErr).toContain(join(dir, '.rouse', 'admin.token'));
    expect(serverErr).toContain(join(dir, '.rouse', 'agent.token'));
    expect(serverOut + serverErr).not.toContain(adminToken);
    expect(serverOut + serverErr).not.toContain(enrollToken);
    // run by path from a directory without rouse installed: the hint runs it the same way
    expect(serverErr).toContain(
      `try:         node ${ROUSE_BIN} submit hello '{"n":1}' && node ${ROUSE_BIN} tasks`,
    );
    const lines = serverOut.trim().split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
  });

  it('warns on a port that browsers and fetch refuse (the dashboard could not be opened)', async () => {
    const other = await mkdtemp(join(tmpdir(), 'rouse-cli-badport-'));
    try {
      const out = await bannerOf(['serve', '--port', '6697', '--db', ':memory:', '--data-dir', other], {
        cwd: other,
        env: {},
      });
      expect(out).toContain("warning: port 6697 is one that browsers and Node's fetch refuse to connect to");
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });

  const heapOf = (stdout: string) =>
    stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { heap?: unknown })
      .find((record) => record.heap !== undefined)?.heap;

  it("sizes V8's heap for a long-lived server, and logs what it set", () => {
    expect(heapOf(serverOut)).toEqual({
      oldGenerationGrowthPercent: 20,
      youngGenerationCapBytes: 8 * 1024 * 1024,
    });
  });

  it('gives a coordinator on PostgreSQL a 16 MB young generation (--store or ROUSE_STORE)', async () => {
    // nothing listens on port 1: serve stops right after logging its heap settings
    const closed = 'postgres://rouse@127.0.0.1:1/none';
    for (const [args, env] of [
      [['--store', closed], {}],
      [[], { ROUSE_STORE: closed }],
    ] as const) {
      const r = await runCli(['serve', '--port', '0', '--store-wait', '0', ...args], { cwd: emptyDir, env });
      expect(r.code, r.stderr).toBe(1);
      expect(heapOf(r.stdout)).toEqual({
        oldGenerationGrowthPercent: 20,
        youngGenerationCapBytes: 16 * 1024 * 1024,
      });
    }
  });

  it("keeps V8's heap defaults with ROUSE_HEAP=node, and refuses another value", async () => {
    // a store it refuses: serve stops with a usage error right after logging its heap settings
    const node = await runCli(['serve', '--store', 'nope://x'], {
      cwd: emptyDir,
      env: { ROUSE_HEAP: 'node' },
    });
    expect(node.code).toBe(2);
    expect(heapOf(node.stdout)).toEqual({ oldGenerationGrowthPercent: null, youngGenerationCapBytes: null });
    const bad = await runCli(['serve', '--port', '0'], { cwd: emptyDir, env: { ROUSE_HEAP: 'small' } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/ROUSE_HEAP must be lean .* or node/);
  });
});

describe('client commands', () => {
  let id: string;

  it('submit creates a task (human and --json), over plain HTTP: a one-shot command opens no call stream', async () => {
    const opened = await streamsOpened();
    const human = await rouse('submit', 'hello', '{"n":1}', '--label', 'team=qa', '--priority', '3');
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^created tsk_\S+ \(hello, created\)/);

    const r = json<{ task: Task; deduplicated: boolean }>(
      await rouse(
        'submit',
        'hello',
        '{"n":2}',
        '--idempotency-key',
        'k-1',
        '--max-attempts',
        '2',
        '--expected-duration',
        '5s..5m',
        '--json',
      ),
    );
    id = r.task.id;
    expect(r.task).toMatchObject({
      type: 'hello',
      status: 'created',
      payload: { n: 2 },
      maxAttempts: 2,
      idempotencyKey: 'k-1',
    });
    expect(r.task.timing.heartbeatIntervalMs).toBe(1000); // min 5 s / 10, clamped to 1 s
    expect(r.deduplicated).toBe(false);

    const again = json<{ task: Task; deduplicated: boolean }>(
      await rouse('submit', 'hello', '{"n":2}', '--idempotency-key', 'k-1', '--json'),
    );
    expect(again.task.id).toBe(id);
    expect(again.deduplicated).toBe(true);
    expect(await streamsOpened()).toBe(opened);
  });

  it('submit reports API errors as "error: <message> (<code>)" with exit 1', async () => {
    const r = await rouse('submit', 'hello', '{"n":3}', '--idempotency-key', 'k-1');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: .+ \(idempotency_conflict\)$/m);
  });

  it('tasks lists and filters (table and --json)', async () => {
    const table = await rouse('tasks', '--type', 'hello');
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+TYPE\s+STATUS\s+ATTEMPT\s+AGENT/);
    expect(table.stdout).toContain(id);

    const all = json<{ tasks: Task[]; nextCursor: string | null }>(await rouse('tasks', '--json'));
    expect(all.tasks.map((t) => t.id)).toContain(id);
    const labelled = json<{ tasks: Task[] }>(await rouse('tasks', '--label', 'team=qa', '--json'));
    expect(labelled.tasks).toHaveLength(1);
    expect(labelled.tasks[0]?.labels).toEqual({ team: 'qa' });

    const paged = json<{ tasks: Task[]; nextCursor: string | null }>(
      await rouse('tasks', '--limit', '1', '--json'),
    );
    expect(paged.tasks).toHaveLength(1);
    expect(paged.nextCursor).toBeTruthy();
    const every = json<{ tasks: Task[]; nextCursor: string | null }>(
      await rouse('tasks', '--limit', '1', '--all', '--json'),
    );
    expect(every.tasks.length).toBe(all.tasks.length);
    expect(every.nextCursor).toBeNull();
  });

  it('show prints the task and its history', async () => {
    const r = await rouse('show', id);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(id);
    expect(r.stdout).toContain('History');
    expect(r.stdout).toMatch(/∅ → created/);
    const j = json<{ task: Task; events: { to: string }[] }>(await rouse('show', id, '--json'));
    expect(j.task.id).toBe(id);
    expect(j.events[0]?.to).toBe('created');
  });

  it('why explains that no agent serves the type', async () => {
    const r = await rouse('why', id);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('no_agents_for_type');
    expect(r.stdout).toContain('What you can do');
    // the suggestion names the option an SDK Worker takes its task types from
    const option = /an @rouse\/sdk Worker with (\w+): \["hello"\]/.exec(r.stdout)?.[1];
    expect(option).toBe('taskTypes');
    const worker = resolveWorkerOptions({
      url,
      token: 'enroll',
      agentType: 'cli-test',
      handler: async () => null,
      [option as string]: ['hello'],
    });
    expect(worker.taskTypes).toEqual(['hello']);
    const d = json<{ taskId: string; reasons: { code: string }[] }>(await rouse('why', id, '--json'));
    expect(d.taskId).toBe(id);
    expect(d.reasons.map((x) => x.code)).toContain('no_agents_for_type');
  });

  it('cancel cancels, and cancelling again is an error (exit 1)', async () => {
    const r = json<{ task: Task }>(await rouse('cancel', id, '--reason', 'not needed', '--json'));
    expect(r.task.status).toBe('cancelled');
    const again = await rouse('cancel', id);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error: .+ \(invalid_transition\)$/m);
  });

  it('retry gives a final failed task another attempt; agents lists the agent', async () => {
    const created = json<{ task: Task }>(await rouse('submit', 'breaks', '--max-attempts', '1', '--json'));
    const { agent, task } = await claimAs('breaker-1', 'breaks');
    expect(task.id).toBe(created.task.id);
    await agent.failTask(task.id, {
      version: task.version,
      error: { code: 'boom', message: 'it broke', retryable: false },
    });
    const before = json<{ task: Task }>(await rouse('show', task.id, '--json'));
    expect(before.task).toMatchObject({ status: 'failed', final: true });

    const r = json<{ task: Task }>(await rouse('retry', task.id, '--json'));
    expect(r.task.id).toBe(task.id);
    expect(r.task.final).toBe(false);
    const human = await rouse('retry', 'tsk_does_not_exist');
    expect(human.code).toBe(1);
    expect(human.stderr).toMatch(/\(not_found\)$/m);

    const agents = json<{ agents: { name: string; taskTypes: string[] }[] }>(await rouse('agents', '--json'));
    expect(agents.agents.find((a) => a.name === 'breaker-1')?.taskTypes).toEqual(['breaks']);
    const table = await rouse('agents');
    expect(table.stdout).toMatch(/^ID\s+NAME\s+AGENT TYPE\s+STATUS/);
    expect(table.stdout).toContain('breaker-1');
  });

  it('submit --wait prints transitions and exits 0 when the task completes; logs prints its lines', async () => {
    const waiting = rouse('submit', 'waits', '{"x":1}', '--wait');
    const { agent, task } = await claimAs('waiter-1', 'waits');
    await agent.appendLogs(task.id, { version: task.version, lines: [{ text: 'hello from the agent' }] });
    await agent.completeTask(task.id, { version: task.version, result: { answer: 42 } });
    const r = await waiting;
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(task.id);
    expect(r.stdout).toMatch(/created → claimed/);
    expect(r.stdout).toMatch(/running → completed/);
    expect(r.stdout).toContain('"answer":42');

    const logs = await rouse('logs', task.id);
    expect(logs.code).toBe(0);
    expect(logs.stdout).toContain('hello from the agent');
    const lj = json<{ lines: { text: string }[] }>(await rouse('logs', task.id, '--json'));
    expect(lj.lines.map((l) => l.text)).toEqual(['hello from the agent']);
    const followed = await rouse('logs', task.id, '-f'); // the task is final: the stream ends
    expect(followed.code).toBe(0);
    expect(followed.stdout).toContain('hello from the agent');
  });

  it('logs prints every line of a long log, a page at a time, with and without -f', async () => {
    const created = json<{ task: { id: string } }>(await rouse('submit', 'long-log', '--json'));
    const { agent, task } = await claimAs('long-1', 'long-log');
    expect(task.id).toBe(created.task.id);
    for (let i = 0; i < 2500; i += 1000) {
      const lines = Array.from({ length: Math.min(1000, 2500 - i) }, (_, j) => ({
        text: `line ${i + j + 1}`,
      }));
      await agent.appendLogs(task.id, { version: task.version, lines });
    }
    await agent.completeTask(task.id, { version: task.version });
    const expected = Array.from({ length: 2500 }, (_, i) => `line ${i + 1}`);
    const lj = json<{ lines: { text: string }[] }>(await rouse('logs', task.id, '--json'));
    expect(lj.lines.map((l) => l.text)).toEqual(expected);
    const plain = await rouse('logs', task.id);
    expect(
      plain.stdout
        .trim()
        .split('\n')
        .map((l) => l.replace(/^.*stdout {2}/, '')),
    ).toEqual(expected);
    const followed = await rouse('logs', task.id, '-f', '--json');
    expect(
      followed.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).text),
    ).toEqual(expected);
    const after = json<{ lines: { text: string }[] }>(
      await rouse('logs', task.id, '--after', '2400', '--json'),
    );
    expect(after.lines.map((l) => l.text)).toEqual(expected.slice(2400));
  });

  it('submit --wait exits 1 when the task ends without completing', async () => {
    const waiting = rouse('submit', 'fails', '--max-attempts', '1', '--wait', '--json');
    const { agent, task } = await claimAs('failer-1', 'fails');
    await agent.failTask(task.id, {
      version: task.version,
      error: { code: 'nope', message: 'no', retryable: false },
    });
    const r = await waiting;
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).task).toMatchObject({ id: task.id, status: 'failed', final: true });
    // Several statuses at once, as for agents.
    const listed = json<{ tasks: { id: string; status: string }[] }>(
      await rouse('tasks', '--status', 'failed,timeout', '--type', 'fails', '--json'),
    );
    expect(listed.tasks.map((t) => t.id)).toContain(task.id);
    expect(listed.tasks.every((t) => t.status === 'failed' || t.status === 'timeout')).toBe(true);
  });

  it('a wrong token is an API error (exit 1, unauthorized)', async () => {
    const r = await rouse('tasks', '--token', 'wrong');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/\(unauthorized\)$/m);
  });

  it('--url and --token work without a data dir', async () => {
    const r = await runCli(['tasks', '--json', '--url', url, '--token', adminToken], { cwd: emptyDir });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).tasks.length).toBeGreaterThan(0);
    const viaEnv = await runCli(['tasks', '--json'], {
      cwd: emptyDir,
      env: { ROUSE_URL: url, ROUSE_TOKEN: adminToken },
    });
    expect(viaEnv.code).toBe(0);
  });
});

describe.concurrent('usage errors (exit 2)', () => {
  it.each([
    [['tasks', '--bogus'], /unknown option '--bogus'/],
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['tasks', '--status', 'failed,sleeping'], /--status: "sleeping" is not a status; use created, claimed/],
    [['submit', 'hello', '{not json'], /not valid JSON/],
    [['submit', 'hello', '--run-at', 'someday'], /--run-at/],
    [['submit', 'hello', '--expected-duration', '5m..5s'], /max must not be below min/],
    [['show'], /missing required argument 'id'/],
    // Refused by the coordinator as validation_failed: still a bad option value.
    [['tasks', '--limit', '100000'], /\(validation_failed\)/],
    [['logs', 'tsk_x', '--after', '-1'], /after|validation_failed/],
    [['show', 'a', 'b'], /too many arguments/],
    [[], /Usage: rouse/],
    [
      ['tasks', '--url', 'localhost:7070', '--token', 't'],
      /--url: "localhost:7070" has no scheme; write http:\/\/localhost:7070 \(a coordinator URL looks like http:\/\/127\.0\.0\.1:7070\)/,
    ],
    [['agents', '--url', 'http://', '--token', 't'], /--url: "http:\/\/" is not a valid http\(s\) URL/],
    [
      ['tasks', '--url', 'http://127.0.0.1:7070/v1', '--token', 't'],
      /--url: "http:\/\/127\.0\.0\.1:7070\/v1" names a path of the API \(\/v1\); give the coordinator's address without it/,
    ],
    [
      ['tasks', '--url', 'http://127.0.0.1:7070', '--token', 'adm_token\r'],
      /the token holds a space or a control character \(a carriage return from a file with CRLF line endings\?\)/,
    ],
  ])('rouse %j', async (args, message) => {
    const r = await rouse(...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it('a ROUSE_URL that is not an http(s) URL', async () => {
    const r = await runCli(['tasks'], { cwd: emptyDir, env: { ROUSE_URL: 'ftp://x', ROUSE_TOKEN: 't' } });
    expect(r.stderr).toContain('error: ROUSE_URL: "ftp://x" is not a valid http(s) URL');
    expect(r.code).toBe(2);
  });
});

describe.concurrent('no coordinator (exit 3)', () => {
  it('says to run `rouse serve` when nothing is found', async () => {
    const r = await runCli(['tasks'], { cwd: emptyDir });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('no coordinator found');
    expect(r.stderr).toContain('rouse serve');
    expect(r.stderr).toContain('--url');
  });

  it('says server.json is stale when its server is gone', async () => {
    const stale = await mkdtemp(join(tmpdir(), 'rouse-cli-stale-'));
    try {
      await mkdir(join(stale, '.rouse'));
      await writeFile(
        join(stale, '.rouse', 'server.json'),
        JSON.stringify({ url: 'http://127.0.0.1:9', pid: 2 ** 22 + 7 }),
      );
      await writeFile(join(stale, '.rouse', 'admin.token'), 'token\n');
      const r = await runCli(['tasks'], { cwd: stale });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('cannot reach the coordinator at http://127.0.0.1:9');
      expect(r.stderr).toMatch(/server\.json is stale: the server that wrote it \(pid \d+\) is not running/);
    } finally {
      await rm(stale, { recursive: true, force: true });
    }
  });

  it('says it cannot reach the URL when nothing listens there', async () => {
    const r = await runCli(['agents', '--url', 'http://127.0.0.1:1', '--token', 't'], { cwd: emptyDir });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('cannot reach the coordinator at http://127.0.0.1:1');
  });
});

describe.concurrent('--help', () => {
  const expectations: Record<string, string[]> = {
    serve: [
      '--port',
      '--host',
      '--data-dir',
      '--db',
      '--log-level',
      '--metrics-public',
      '--show-tokens',
      'Examples',
    ],
    submit: [
      '--payload-file',
      '--idempotency-key',
      '--priority',
      '--run-at',
      '--max-attempts',
      '--resumable',
      '--requires',
      '--label',
      '--heartbeat-interval',
      '--expected-duration',
      '--wait',
      '--json',
      '--url',
      '--token',
    ],
    tasks: ['--status', '--type', '--agent', '--label', '--limit', '--all', '--json'],
    show: ['<id>', '--json'],
    why: ['<id>', '--json', 'no_agents_for_type'],
    logs: ['--follow', '--after', '--json'],
    agents: ['--json'],
    cancel: ['--reason', '--json'],
    retry: ['<id>', '--json'],
    demo: ['--act', 'watchdog', '--duration', '--data-dir'],
  };
  it.each(Object.entries(expectations))('rouse %s --help', async (cmd, options) => {
    const r = await rouse(cmd, '--help');
    expect(r.code).toBe(0);
    for (const o of options) expect(r.stdout).toContain(o);
  });

  it('a reader that goes away (`rouse tasks --help | head -1`) ends it quietly with exit 0', async () => {
    const child = spawnCli(['tasks', '--help'], { cwd: emptyDir });
    child.stdout?.destroy(); // the reading end is closed before the help is written
    let stderr = '';
    child.stderr?.on('data', (d) => {
      stderr += d;
    });
    expect(await waitForExit(child)).toBe(0);
    expect(stderr).toBe('');
  });

  it('rouse --help documents the exit codes', async () => {
    const r = await rouse('--help');
    expect(r.code).toBe(0);
    for (const c of [
      'serve',
      'submit',
      'tasks',
      'show',
      'why',
      'logs',
      'agents',
      'cancel',
      'retry',
      'demo',
      'Exit codes',
    ]) {
      expect(r.stdout).toContain(c);
    }
  });
});

describe('shutdown', () => {
  it('SIGINT (Ctrl-C) closes the server gracefully (exit 0)', async () => {
    const other = await mkdtemp(join(tmpdir(), 'rouse-cli-sigint-'));
    try {
      const child = spawnCli(['serve', '--port', '0', '--db', ':memory:', '--data-dir', other], {
        cwd: other,
      });
      const file = join(other, 'server.json');
      const until = Date.now() + 15_000;
      while (Date.now() < until && child.exitCode === null) {
        if (await readFile(file, 'utf8').catch(() => null)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(child.exitCode).toBeNull();
      child.kill('SIGINT');
      expect(await waitForExit(child)).toBe(0);
      await expect(readFile(file, 'utf8')).rejects.toThrow();
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });

  it('SIGTERM closes the server gracefully (exit 0, server.json removed)', async () => {
    server.kill('SIGTERM');
    expect(await waitForExit(server)).toBe(0);
    await expect(readFile(join(dir, '.rouse', 'server.json'), 'utf8')).rejects.toThrow();
    const r = await rouse('tasks');
    expect(r.code).toBe(3);
  });
});
