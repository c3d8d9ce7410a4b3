/**
 * Issue 11, tests 1–7 for the Codex CLI: a real coordinator, the real `rouse agent --adapter codex`
 * process, the pinned `codex exec` (test/harness/agent-clis.ts), and a fake Responses API on loopback
 * that each test scripts (test/harness/fake-openai.ts). Fails, never skips, when the CLI is missing.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Intervention, Task } from '@rouse/protocol';
import { Client } from '@rouse/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { agentCliBin } from '../harness/agent-clis.js';
import {
  type CodexAgent,
  hangAfterResultBin,
  killProcessesIn,
  processesIn,
  startCodexAgent,
} from '../harness/codex-agent.js';
import { type CoordinatorProcess, startCoordinatorProcess } from '../harness/coordinator-process.js';
import { type FakeOpenAI, inputTexts, startFakeOpenAI } from '../harness/fake-openai.js';
import { writePolicyFile } from '../harness/policy-file.js';
import { tempDir } from '../harness/temp-dir.js';
import { waitFor } from '../harness/wait.js';

const POLICY = `
policies:
  - name: coding-agents
    agent_type: "*"
    heartbeat: { expected_interval: 500ms, timeout_factor: 4 }
    dependencies: []
    recovery_actions:
      - action: wake
        on_condition: stall_detected
        timeout: 20s
`;

/** Fast timing for a task: beats every 300 ms, lost after 1.2 s of silence. */
const FAST = { heartbeatIntervalMs: 300, timeoutFactor: 4 };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface World {
  coord: CoordinatorProcess;
  admin: Client;
  fake: FakeOpenAI;
}

async function world(): Promise<World> {
  agentCliBin('codex'); // fail (never skip) when the pinned CLI is not installed
  const coord = await startCoordinatorProcess({ extraArgs: ['--policies', writePolicyFile(POLICY)] });
  cleanups.push(() => coord.kill('SIGTERM'));
  const admin = new Client({ url: coord.url, token: coord.adminToken });
  const fake = await startFakeOpenAI();
  cleanups.push(() => fake.close());
  return { coord, admin, fake };
}

function agent(w: World, options: Parameters<typeof startCodexAgent>[2] = {}): CodexAgent {
  const a = startCodexAgent(w.coord, w.fake, options);
  cleanups.push(async () => {
    a.kill('SIGKILL');
    await a.exited;
    killProcessesIn(a.dataDir);
  });
  return a;
}

/** A task directory the test owns, so it can look inside and find what runs there. */
function taskDir(): string {
  const dir = tempDir('rouse-codex-task-');
  cleanups.push(() => {
    killProcessesIn(dir);
  });
  return dir;
}

async function until(
  admin: Client,
  id: string,
  pred: (t: Task) => boolean,
  what: string,
  timeoutMs = 40_000,
) {
  return waitFor(
    async () => {
      const t = await admin.getTask(id);
      return pred(t) ? t : null;
    },
    { what: `task ${id}: ${what}`, timeoutMs, intervalMs: 100 },
  );
}

const final = (t: Task) => t.final;

describe('rouse agent --adapter codex (pinned Codex CLI, fake model)', () => {
  it('1. completes a task: a tool call writes a file, the last message is the result, usage and events recorded', async () => {
    const w = await world();
    w.fake.script(
      { kind: 'tool', command: 'echo hello > out.txt' },
      { kind: 'answer', text: 'I wrote out.txt', usage: { inputTokens: 120, outputTokens: 30 } },
    );
    agent(w);
    const cwd = taskDir();
    const { task } = await w.admin.createTask({
      type: 'codex',
      payload: { prompt: 'write hello into out.txt', cwd },
      timing: FAST,
    });
    const done = await until(w.admin, task.id, final, 'final');
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    const result = done.result as Record<string, unknown>;
    expect(result).toMatchObject({
      message: 'I wrote out.txt',
      files: ['out.txt'],
      usage: expect.objectContaining({ inputTokens: 220, outputTokens: 50 }), // both requests of the turn
    });
    expect(typeof result.sessionId).toBe('string');
    expect(done.session).toMatchObject({ flavor: 'codex', sessionId: result.sessionId });
    const logs = (await w.admin.getLogs(task.id)).lines.map((l) => l.text).join('\n');
    expect(logs).toContain('"type":"thread.started"');
    expect(logs).toContain('"type":"command_execution"');
    expect(logs).toContain('"type":"turn.completed"');
  });

  it('2. the adapter SIGKILLed mid-turn: the task times out, another agent (another home) resumes the same session with its conversation', async () => {
    const w = await world();
    w.fake.script({ kind: 'tool', command: 'echo one > one.txt' }, { kind: 'hang' });
    const a = agent(w);
    const { task } = await w.admin.createTask({
      type: 'codex',
      payload: { prompt: 'the original task, in two steps' },
      timing: FAST,
    });
    // Mid-turn: the tool ran, the model hangs on the next request, the session is saved.
    const saved = await until(w.admin, task.id, (t) => !!sessionOf(t), 'a session', 30_000);
    await waitFor(() => w.fake.hanging() > 0, { what: 'the second request to hang', timeoutMs: 30_000 });
    const sessionId = sessionOf(saved)!;
    // The transcript travels as it was last synced (after each completed item): wait for the tool's.
    await waitFor(
      async () => {
        const ref = ((await w.admin.getTask(task.id)).session as { transcript?: { id: string } | null })
          .transcript;
        if (!ref) return false;
        return (await w.admin.getTaskBlob(task.id, ref.id)).toString('utf8').includes('echo one > one.txt');
      },
      { what: 'the carried transcript to hold the tool call', timeoutMs: 20_000, intervalMs: 200 },
    );
    expect(processesIn(a.dataDir).length).toBeGreaterThan(0);
    a.kill('SIGKILL');
    await a.exited;
    // the host is gone: its CLI too (the SIGKILLed agent's group guard stops its group)
    await waitFor(() => processesIn(a.dataDir).length === 0, {
      what: "the SIGKILLed agent's Codex to be gone",
      timeoutMs: 10_000,
    });
    const timedOut = await until(w.admin, task.id, (t) => t.status === 'timeout', 'timed out');
    expect(timedOut.error?.code).toBe('heartbeat_timeout');

    const sent = w.fake.requests.length;
    w.fake.script({ kind: 'answer', text: 'finished after the move' });
    const b = agent(w);
    const done = await until(w.admin, task.id, final, 'final');
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(done.attempt).toBe(2);
    const notes = (await w.admin.getLogs(task.id)).lines
      .filter((l) => l.stream === 'adapter')
      .map((l) => l.text);
    expect(done.result, notes.join('\n')).toMatchObject({ message: 'finished after the move', sessionId });
    expect(b.dataDir).not.toBe(a.dataDir);
    // The resumed request carried the earlier conversation: the prompt and the tool call with its output.
    const resumed = w.fake.requests.slice(sent);
    expect(resumed.length).toBeGreaterThan(0);
    const texts = inputTexts(resumed[0]!);
    expect(texts, JSON.stringify(texts.map((t) => t.slice(0, 100)))).toContain(
      'the original task, in two steps',
    );
    expect(texts.some((t) => t.includes('echo one > one.txt'))).toBe(true);
  });

  it('3. a hung stream: progress_stalled, the wake interrupts the CLI and resumes the session with a nudge; the wake succeeded', async () => {
    const w = await world();
    w.fake.script({ kind: 'hang' }, { kind: 'answer', text: 'unstuck and done' });
    agent(w);
    const { task } = await w.admin.createTask({
      type: 'codex',
      payload: { prompt: 'the task that hangs' },
      timing: { ...FAST, stallTimeoutMs: 2000 },
    });
    const running = await until(w.admin, task.id, (t) => !!sessionOf(t), 'a session', 30_000);
    const sessionId = sessionOf(running)!;
    const done = await until(w.admin, task.id, final, 'final', 60_000);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(done.attempt).toBe(1);
    expect(done.result).toMatchObject({ message: 'unstuck and done', sessionId });
    const wake = await waitFor(
      async () => {
        const list = (await w.admin.listInterventions({ agentId: done.agentId! }))
          .interventions as Intervention[];
        return list.find((i) => i.action === 'wake' && i.state === 'succeeded') ?? null;
      },
      { what: 'the wake to succeed', timeoutMs: 20_000, intervalMs: 200 },
    );
    expect(wake.condition).toBe('progress_stalled');
    // The same thread, resumed with the nudge: the original prompt and the nudge in one conversation.
    const last = inputTexts(w.fake.requests.at(-1)!);
    expect(last).toContain('the task that hangs');
    expect(last.some((t) => /interrupted/i.test(t) && t.includes('the task that hangs'))).toBe(true);
  });

  it('4. 429 with Retry-After: openai turns rate_limited, tasks requiring it wait, no attempt is burnt; work resumes', async () => {
    const w = await world();
    w.fake.setFallback({ kind: 'status', status: 429, retryAfterSec: 2 });
    agent(w, { extraArgs: ['--concurrency', '2'] });
    const { task: first } = await w.admin.createTask({
      type: 'codex',
      payload: { prompt: 'first' },
      timing: FAST,
    });
    const dep = await waitFor(
      async () => {
        const deps = await dependencies(w);
        return deps.find((d) => d.name === 'openai' && d.state === 'rate_limited') ?? null;
      },
      { what: 'openai to be rate_limited', timeoutMs: 20_000, intervalMs: 100 },
    );
    expect(dep.reportedBy).toMatch(/^agent:/);
    const { task: second } = await w.admin.createTask({
      type: 'codex',
      payload: { prompt: 'second' },
      requires: ['openai'],
      timing: FAST,
    });
    const why = await w.admin.diagnose(second.id);
    expect(why.reasons.map((r) => r.code)).toContain('dependency_unavailable');
    expect((await w.admin.getTask(second.id)).status).toBe('created');

    w.fake.setFallback({ kind: 'answer', text: 'the model is back' });
    const [a, b] = await Promise.all([
      until(w.admin, first.id, final, 'final'),
      until(w.admin, second.id, final, 'final'),
    ]);
    expect(a.status, JSON.stringify(a.error)).toBe('completed');
    expect(a.attempt).toBe(1);
    expect(b.status, JSON.stringify(b.error)).toBe('completed');
    expect(b.attempt).toBe(1);
    expect((await dependencies(w)).find((d) => d.name === 'openai')?.state).toBe('up');
  });

  it('5. the CLI prints its result and hangs: killed after the grace, the task completed', async () => {
    const w = await world();
    w.fake.script({ kind: 'answer', text: 'done, but I will not exit' });
    agent(w, { bin: hangAfterResultBin() });
    const cwd = taskDir();
    const { task } = await w.admin.createTask({ type: 'codex', payload: { prompt: 'x', cwd }, timing: FAST });
    const done = await until(w.admin, task.id, final, 'final');
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(done.result).toMatchObject({ message: 'done, but I will not exit' });
    await waitFor(() => noneIn(cwd), { what: 'the hanging wrapper to be killed' });
  });

  it('6. execution timeout: the group is killed (grandchild sleep included) and the adapter fails it first; cancel kills the CLI', async () => {
    const w = await world();
    w.fake.setFallback({
      kind: 'tool',
      command: 'echo started > started.txt; sleep 300; echo never > never.txt',
    });
    agent(w);
    const cwd = taskDir();
    const { task } = await w.admin.createTask({
      type: 'codex',
      payload: { prompt: 'sleep a long time', cwd },
      maxAttempts: 1,
      timing: { ...FAST, executionTimeoutMs: 8000 },
    });
    const failed = await until(w.admin, task.id, final, 'final');
    // The command ran and was cut short in its sleep; below, nothing of it is left.
    expect(existsSync(join(cwd, 'started.txt'))).toBe(true);
    expect(existsSync(join(cwd, 'never.txt'))).toBe(false);
    expect(failed.status).toBe('failed');
    const failEvent = (await w.admin.getTaskEvents(task.id)).find((e) => e.to === 'failed')!;
    expect(failEvent.actor).not.toBe('coordinator'); // the adapter, before the attempt deadline
    expect(failed.error?.message).toMatch(/timeout|timed out/i);
    await waitFor(() => noneIn(cwd), { what: 'the group (sleep included) to be gone' });

    const cwd2 = taskDir();
    const { task: second } = await w.admin.createTask({
      type: 'codex',
      payload: { prompt: 'sleep, then be cancelled', cwd: cwd2 },
      timing: FAST,
    });
    await waitFor(() => processesIn(cwd2).some((p) => /\bsleep 300\b/.test(p.cmd)), {
      what: 'the second sleep',
      timeoutMs: 30_000,
    });
    await w.admin.cancelTask(second.id, 'e2e');
    try {
      // A behaviour bound, not a speed one: under a loaded machine the cancel's heartbeat, the grace
      // and the group guard's sweep of the sandbox (reparented to init) took longer than 5 s once.
      await waitFor(() => noneIn(cwd2), { what: 'the cancelled CLI to be gone', timeoutMs: 15_000 });
    } catch (err) {
      const notes = (await w.admin.getLogs(second.id)).lines.filter((l) => l.stream !== 'stdout');
      throw new Error(
        `${(err as Error).message}\n${notes.map((l) => `${l.at} ${l.stream}: ${l.text}`).join('\n')}`,
      );
    }
    expect((await w.admin.getTask(second.id)).status).toBe('cancelled');
  });

  it('7. over its token budget: stopped, failed for good with the reason', async () => {
    const w = await world();
    w.fake.setFallback({
      kind: 'answer',
      text: 'expensive',
      usage: { inputTokens: 5000, outputTokens: 500 },
    });
    agent(w);
    const { task } = await w.admin.createTask({
      type: 'codex',
      payload: { prompt: 'spend', maxTokens: 1000 },
      timing: FAST,
    });
    const done = await until(w.admin, task.id, final, 'final');
    expect(done.status).toBe('failed');
    expect(done.attempt).toBe(1);
    expect(done.error).toMatchObject({ retryable: false });
    expect(done.error?.message).toMatch(/token/i);
    expect(done.error?.message).toMatch(/1000|1,000/);
  });
});

/** True when nothing runs in `dir`; else throws, naming what does (waitFor shows the last one). */
function noneIn(dir: string): boolean {
  const left = processesIn(dir);
  if (left.length > 0)
    throw new Error(`still running: ${left.map((p) => `${p.pid} ${p.cmd.slice(0, 80)}`).join('; ')}`);
  return true;
}

function sessionOf(t: Task): string | null {
  const s = t.session as { sessionId?: unknown } | null;
  return typeof s?.sessionId === 'string' ? s.sessionId : null;
}

async function dependencies(w: World): Promise<{ name: string; state: string; reportedBy: string }[]> {
  const res = await fetch(`${w.coord.url}/v1/dependencies`, {
    headers: { authorization: `Bearer ${w.coord.adminToken}` },
  });
  if (!res.ok) throw new Error(`GET /v1/dependencies: ${res.status}`);
  return ((await res.json()) as { dependencies: { name: string; state: string; reportedBy: string }[] })
    .dependencies;
}
