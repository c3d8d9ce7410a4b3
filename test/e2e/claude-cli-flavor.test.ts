/**
 * The Claude Code flavor with the pinned CLI itself (no coordinator): the command it builds runs the
 * real `claude -p` against the fake Messages API, its parser understands what the CLI prints, and a
 * session carried by `sessionFiles` / `restoreSession` into another home and cwd resumes with its
 * conversation; and the fake itself answers what the CLI asks in ways too slow to provoke here
 * (its non-streaming retry after a 300 s stall). Fails (never skips) when the CLI is not installed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeFlavor } from '../../packages/agent-host/src/adapters/claude/claude-flavor.js';
import type { CliEvent, CliRunPlan } from '../../packages/agent-host/src/adapters/cli-flavor.js';
import { agentCliBin } from '../harness/agent-clis.js';
import { type FakeAnthropic, lingeringSettings, startFakeAnthropic } from '../harness/fake-anthropic.js';
import { tempDir } from '../harness/temp-dir.js';
import { waitFor } from '../harness/wait.js';

interface Run {
  proc: ChildProcess;
  events: CliEvent[];
  lines: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ChildProcess>();

async function start(plan: CliRunPlan): Promise<Run> {
  await claudeFlavor.prepareHome(plan);
  const { args, env } = claudeFlavor.command(plan);
  const proc = spawn(agentCliBin('claude'), args, {
    cwd: plan.cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  running.add(proc);
  const parse = claudeFlavor.parser();
  const run: Run = {
    proc,
    events: [],
    lines: [],
    exited: new Promise((resolve) =>
      proc.once('exit', (code, signal) => {
        running.delete(proc);
        resolve({ code, signal });
      }),
    ),
  };
  createInterface({ input: proc.stdout! }).on('line', (l) => {
    run.lines.push(l);
    run.events.push(...parse(l));
  });
  proc.stderr!.resume();
  return run;
}

const resultOf = (r: Run) => r.events.find((e) => e.type === 'result');

describe('claude -p (pinned) driven by the Claude flavor', () => {
  let fake: FakeAnthropic;
  let root: string;
  beforeEach(async () => {
    fake = await startFakeAnthropic();
    root = tempDir('rouse-claude-cli-');
  });
  afterEach(async () => {
    for (const p of running) if (p.pid) process.kill(-p.pid, 'SIGKILL');
    await fake.close();
  });

  const plan = (over: Partial<CliRunPlan>): CliRunPlan => {
    const cwd = over.cwd ?? join(root, 'work');
    mkdirSync(cwd, { recursive: true });
    return {
      prompt: 'write the file',
      cwd,
      home: join(root, 'home1'),
      model: null,
      resumeSessionId: null,
      newSessionId: null,
      maxTurns: null,
      maxBudgetUsd: null,
      extraArgs: [],
      extraEnv: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'sk-fake' },
      ...over,
    };
  };

  it('runs a tool that writes in the cwd, reports the assigned session, and resumes it in another home and cwd', async () => {
    fake.script(
      { kind: 'bash', command: 'echo hello > out.txt' },
      { kind: 'answer', text: 'Wrote out.txt.', usage: { input: 500, output: 7 } },
    );
    const sessionId = claudeFlavor.assignSessionId()!;
    const first = await start(plan({ newSessionId: sessionId, prompt: 'please write out.txt' }));
    expect(await first.exited).toEqual({ code: 0, signal: null });
    expect(readFileSync(join(root, 'work', 'out.txt'), 'utf8')).toBe('hello\n');
    expect(first.events[0]).toEqual({ type: 'session', sessionId });
    expect(resultOf(first)).toMatchObject({ ok: true, message: 'Wrote out.txt.' });
    expect(first.events.filter((e) => e.type === 'tool_finished')).toHaveLength(1);
    // The CLI never left its home: nothing under the real HOME, its temp files under the plan's home.
    expect(existsSync(join(root, 'home1', 'config', 'projects'))).toBe(true);

    // Carry the transcript to a fresh home and another cwd, as a retry on another host does.
    const files = await claudeFlavor.sessionFiles(join(root, 'home1'), sessionId, join(root, 'work'));
    expect(files.length).toBeGreaterThan(0);
    const carried = files.map((p) => ({ path: p, content: readFileSync(join(root, 'home1', p)) }));
    const other = plan({ home: join(root, 'home2'), cwd: join(root, 'elsewhere') });
    await claudeFlavor.restoreSession(other.home, sessionId, other.cwd, carried);
    fake.script({ kind: 'answer', text: 'Resumed.' });
    const second = await start({ ...other, resumeSessionId: sessionId, prompt: 'go on' });
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(resultOf(second)).toMatchObject({ ok: true, message: 'Resumed.' });
    const last = fake.messageRequests().at(-1);
    const sent = JSON.stringify(last?.messages);
    expect(sent).toContain('please write out.txt');
    expect(sent).toContain('tool_result');
    expect(sent).toContain('go on');
    expect(fake.sessionIds()).toEqual([sessionId]);
  });

  it('a stream that hangs: SIGINT interrupts the turn, the same session resumes with a nudge', async () => {
    fake.script(
      { kind: 'hang', text: 'Let me think' },
      { kind: 'answer', text: 'Finished after the nudge.' },
    );
    const sessionId = claudeFlavor.assignSessionId()!;
    const first = await start(plan({ newSessionId: sessionId }));
    await waitFor(() => fake.hanging() === 1, { what: 'the fake to hang' });
    first.proc.kill(claudeFlavor.interruptSignal);
    expect((await first.exited).code).toBe(0);
    expect(resultOf(first)).toMatchObject({ ok: false, error: { kind: 'interrupted' } });
    const nudge = 'You were interrupted because you seemed stuck; continue.';
    const second = await start(plan({ resumeSessionId: sessionId, prompt: nudge }));
    expect((await second.exited).code).toBe(0);
    expect(resultOf(second)).toMatchObject({ ok: true, message: 'Finished after the nudge.' });
    expect(fake.sawText(nudge)).toBe(true);
    expect(fake.sawText('write the file')).toBe(true);
  });

  it('429 then recovery: rate_limited with the delay, then up, then the result', async () => {
    fake.script({ kind: 'error', status: 429, retryAfterS: 1, times: 2 }, { kind: 'answer', text: 'ok' });
    const run = await start(plan({}));
    expect((await run.exited).code).toBe(0);
    const deps = run.events.filter((e) => e.type === 'dependency');
    expect(deps.map((d) => d.state)).toEqual(['rate_limited', 'rate_limited', 'up']);
    expect(deps[0]).toMatchObject({ status: 429, retryAfterMs: 1000 });
    expect(resultOf(run)).toMatchObject({ ok: true });
  });

  it('the fake answers the non-streaming retry as JSON, releases a hung stream, and scripts errors', async () => {
    const post = (body: object) =>
      fetch(`${fake.url}/v1/messages?beta=true`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    fake.script(
      { kind: 'bash', command: 'ls', usage: { input: 7, output: 3 } },
      { kind: 'error', status: 529, times: 2 },
      { kind: 'hang', text: 'Hmm', releasedText: ' ok' },
    );
    const plain = await post({ model: 'm', stream: false, messages: [] });
    expect(await plain.json()).toMatchObject({
      type: 'message',
      stop_reason: 'tool_use',
      content: [{ type: 'tool_use', name: 'Bash', input: { command: 'ls' } }],
      usage: { input_tokens: 7, output_tokens: 3 },
    });
    for (let i = 0; i < 2; i++) {
      const err = await post({ model: 'm', stream: true, messages: [] });
      expect(err.status).toBe(529);
      expect(await err.json()).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
    }
    const hung = post({ model: 'm', stream: true, messages: [{ role: 'user', content: 'x' }] });
    const res = await hung;
    await waitFor(() => fake.hanging() === 1, { what: 'the stream to hang' });
    fake.release();
    const text = await res.text();
    expect(text).toContain('"text":"Hmm"');
    expect(text).toContain('"text":" ok"');
    expect(text).toContain('event: message_stop');
    expect(fake.queued()).toBe(0);
    expect(fake.requests.map((r) => r.served)).toEqual(['bash', 'error', 'error', 'hang']);
  });

  it('a SessionEnd hook that does not return: the CLI prints its result and does not exit', async () => {
    const marker = join(root, 'hook-ran');
    const settings = lingeringSettings(marker);
    const run = await start(plan({ extraArgs: ['--settings', settings] }));
    await waitFor(() => existsSync(marker) && resultOf(run), {
      what: 'the result and the SessionEnd hook',
      timeoutMs: 30_000,
    });
    expect(resultOf(run)).toMatchObject({ ok: true });
    expect(run.proc.exitCode).toBeNull();
    expect(run.proc.signalCode).toBeNull();
    process.kill(-run.proc.pid!, 'SIGKILL');
    expect((await run.exited).signal).toBe('SIGKILL');
  });
});
