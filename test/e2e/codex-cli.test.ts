/**
 * The Codex flavor against the real, pinned `codex exec` and the fake Responses API, without the
 * adapter: what the flavor writes in the home and puts on the command line works, and the parser
 * reads the CLI's real lines. With ROUSE_CAPTURE_CODEX_FIXTURES=1 the runs also rewrite the parser's
 * fixtures (packages/agent-host/src/adapters/codex/fixtures).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliEvent, CliRunPlan } from '../../packages/agent-host/src/adapters/cli-flavor.js';
import { codexFlavor } from '../../packages/agent-host/src/adapters/codex/codex-flavor.js';
import { agentCliBin } from '../harness/agent-clis.js';
import { type FakeOpenAI, inputTexts, startFakeOpenAI } from '../harness/fake-openai.js';
import { tempDir } from '../harness/temp-dir.js';

const FIXTURES = new URL('../../packages/agent-host/src/adapters/codex/fixtures/', import.meta.url);

let fakes: FakeOpenAI[] = [];
afterEach(async () => {
  await Promise.all(fakes.map((f) => f.close()));
  fakes = [];
});

async function fake(): Promise<FakeOpenAI> {
  const f = await startFakeOpenAI();
  fakes.push(f);
  return f;
}

function plan(f: FakeOpenAI, over: Partial<CliRunPlan> = {}): CliRunPlan {
  return {
    prompt: 'write hello into out.txt',
    cwd: tempDir('codex-cwd-'),
    home: tempDir('codex-home-'),
    model: null,
    resumeSessionId: null,
    newSessionId: null,
    maxTurns: null,
    maxBudgetUsd: null,
    extraArgs: [],
    extraEnv: { OPENAI_BASE_URL: f.baseUrl, OPENAI_API_KEY: 'sk-fake', HOME: tempDir('codex-user-home-') },
    ...over,
  };
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  lines: string[];
  events: CliEvent[];
  stderr: string;
}

/** One bare run of the pinned CLI as the flavor plans it; `interruptWhen` sends its interrupt signal. */
async function runCodex(
  p: CliRunPlan,
  opts: { interruptWhen?: (run: Run) => boolean; fixture?: string } = {},
) {
  await codexFlavor.prepareHome(p);
  const { args, env } = codexFlavor.command(p);
  const child = spawn(agentCliBin('codex'), args, {
    cwd: p.cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const parse = codexFlavor.parser();
  const run: Run = { code: null, signal: null, lines: [], events: [], stderr: '' };
  let buf = '';
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString('utf8');
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (!line.trim()) continue;
      run.lines.push(line);
      run.events.push(...parse(line));
    }
  });
  child.stderr.on('data', (d: Buffer) => {
    run.stderr += d.toString('utf8');
  });
  const bound = setTimeout(() => child.kill('SIGKILL'), 45_000);
  let poll: NodeJS.Timeout | undefined;
  if (opts.interruptWhen) {
    const check = opts.interruptWhen;
    poll = setInterval(() => {
      if (check(run)) {
        clearInterval(poll);
        child.kill(codexFlavor.interruptSignal);
      }
    }, 20);
  }
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((r) =>
    child.on('exit', (c, s) => r([c, s])),
  );
  clearTimeout(bound);
  clearInterval(poll);
  run.code = code;
  run.signal = signal;
  if (opts.fixture && process.env.ROUSE_CAPTURE_CODEX_FIXTURES === '1') {
    mkdirSync(FIXTURES, { recursive: true });
    writeFileSync(new URL(`${opts.fixture}.jsonl`, FIXTURES), `${run.lines.join('\n')}\n`);
  }
  return run;
}

const types = (events: CliEvent[]) => events.map((e) => e.type);

describe('codex exec as the flavor runs it (pinned CLI, fake model)', () => {
  it('runs a tool call that writes a file in the cwd, then answers; the events say so', async () => {
    const f = await fake();
    f.script({ kind: 'tool', command: 'echo hello > out.txt' }, { kind: 'answer', text: 'wrote out.txt' });
    const p = plan(f);
    const run = await runCodex(p, { fixture: 'tool-call' });
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(join(p.cwd, 'out.txt'), 'utf8')).toBe('hello\n');
    expect(types(run.events)).toEqual([
      'session',
      'turn_started',
      'tool_started',
      'tool_finished',
      'item_completed',
      'item_completed',
      'message',
      'usage',
      'turn_completed',
      'result',
    ]);
    expect(run.events.at(-1)).toEqual({ type: 'result', ok: true, message: 'wrote out.txt' });
    expect(run.events.find((e) => e.type === 'usage')).toMatchObject({
      inputTokens: 200,
      outputTokens: 40,
      cumulative: true,
    });
    // The CLI talked to the fake only, with the key from the environment.
    expect(f.requests).toHaveLength(2);
    expect(f.requests[0]?.headers.authorization).toBe('Bearer sk-fake');
    expect(inputTexts(f.requests[0]!)).toContain('write hello into out.txt');
    expect(inputTexts(f.requests[1]!).some((t) => t.includes('echo hello > out.txt'))).toBe(true);
  });

  it('a session resumes by id under another home from its transcript alone, in another cwd', async () => {
    const f = await fake();
    f.script({ kind: 'answer', text: 'first answer' }, { kind: 'answer', text: 'second answer' });
    const first = plan(f, { prompt: 'the first prompt' });
    const run1 = await runCodex(first);
    const session = run1.events.find((e) => e.type === 'session');
    if (session?.type !== 'session') throw new Error('no session event');
    const files = await codexFlavor.sessionFiles(first.home, session.sessionId, first.cwd);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(
      new RegExp(`^sessions/\\d{4}/\\d{2}/\\d{2}/rollout-.*-${session.sessionId}\\.jsonl$`),
    );

    const second = plan(f, {
      prompt: '-a nudge that starts with a dash',
      resumeSessionId: session.sessionId,
    });
    await codexFlavor.restoreSession(
      second.home,
      session.sessionId,
      second.cwd,
      files.map((path) => ({ path, content: readFileSync(join(first.home, path)) })),
    );
    const run2 = await runCodex(second, { fixture: 'resume' });
    expect(run2.code, run2.stderr).toBe(0);
    expect(run2.events[0]).toEqual({ type: 'session', sessionId: session.sessionId });
    const sent = inputTexts(f.requests[1]!);
    expect(sent).toEqual(
      expect.arrayContaining(['the first prompt', 'first answer', '-a nudge that starts with a dash']),
    );
    expect(sent.some((t) => t.includes(second.cwd))).toBe(true);
    // Usage is the thread's total: both turns.
    expect(run2.events.find((e) => e.type === 'usage')).toMatchObject({ inputTokens: 200, outputTokens: 40 });
  });

  it('restoreSession refuses paths outside the sessions folder', async () => {
    const home = tempDir('codex-home-');
    const id = '01a235b2-b619-7eb0-ad7c-9692530178f5';
    await expect(
      codexFlavor.restoreSession(home, id, home, [{ path: `../x-${id}.jsonl`, content: Buffer.from('') }]),
    ).rejects.toThrow(/refusing/);
    await expect(
      codexFlavor.restoreSession(home, id, home, [{ path: 'config.toml', content: Buffer.from('') }]),
    ).rejects.toThrow(/refusing/);
    expect(existsSync(join(home, 'config.toml'))).toBe(false);
  });

  it('429 with Retry-After: rate-limited reports while the CLI retries, up when it answers', async () => {
    const f = await fake();
    f.script(
      { kind: 'status', status: 429, retryAfterSec: 1, times: 2 },
      { kind: 'answer', text: 'after 429' },
    );
    const run = await runCodex(plan(f), { fixture: 'rate-limited' });
    expect(run.code, run.stderr).toBe(0);
    const deps = run.events.filter((e) => e.type === 'dependency');
    expect(deps.map((d) => d.state)).toEqual(['rate_limited', 'rate_limited', 'up']);
    expect(deps[0]).toMatchObject({ status: 429 });
    expect(run.events.at(-1)).toMatchObject({ type: 'result', ok: true, message: 'after 429' });
  });

  it('5xx: down reports while the CLI retries', async () => {
    const f = await fake();
    f.script({ kind: 'status', status: 503, times: 5 }, { kind: 'answer', text: 'back' });
    const run = await runCodex(plan(f), { fixture: 'server-error' });
    expect(run.code, run.stderr).toBe(0);
    const deps = run.events.filter((e) => e.type === 'dependency');
    expect(deps.length).toBeGreaterThan(0);
    expect(deps.at(-1)?.state).toBe('up');
    expect(deps.slice(0, -1).every((d) => d.state === 'down')).toBe(true);
  });

  it('401: the first retry notice is already the verdict, an auth error (never retried by Rouse)', async () => {
    const f = await fake();
    f.setFallback({ kind: 'status', status: 401, message: 'invalid api key' });
    // The CLI would retry a refused key for minutes; the adapter stops it once the verdict is out.
    const run = await runCodex(plan(f), {
      fixture: 'auth-refused',
      interruptWhen: (r) => r.events.some((e) => e.type === 'result'),
    });
    expect(run.events.some((e) => e.type === 'dependency')).toBe(false);
    const results = run.events.filter((e) => e.type === 'result');
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      ok: false,
      error: { kind: 'auth', detail: expect.stringMatching(/401/) },
    });
  });

  it('a hung stream: SIGINT ends the CLI at once without a verdict; the thread resumes with a nudge', async () => {
    const f = await fake();
    f.script({ kind: 'hang' }, { kind: 'answer', text: 'unstuck' });
    const p = plan(f, { prompt: 'the original task' });
    const run = await runCodex(p, { interruptWhen: () => f.hanging() > 0, fixture: 'interrupted' });
    expect(run.code).toBe(1);
    expect(run.events.some((e) => e.type === 'result')).toBe(false);
    const session = run.events.find((e) => e.type === 'session');
    if (session?.type !== 'session') throw new Error('no session event');
    const again = await runCodex({
      ...p,
      prompt: 'You were interrupted; continue: the original task',
      resumeSessionId: session.sessionId,
    });
    expect(again.code, again.stderr).toBe(0);
    expect(again.events.at(-1)).toMatchObject({ type: 'result', ok: true, message: 'unstuck' });
    expect(inputTexts(f.requests[1]!)).toEqual(
      expect.arrayContaining(['the original task', 'You were interrupted; continue: the original task']),
    );
  });
});
