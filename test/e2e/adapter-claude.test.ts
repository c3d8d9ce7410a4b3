/**
 * Issue 11, tests 1–7 for Claude Code: the pinned `claude -p` (2.1.197) run by the Claude adapter
 * against the fake Messages API on 127.0.0.1 (test/harness/fake-anthropic.ts), through a real
 * coordinator. Fails, never skips, when the CLI is not installed.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CreateTaskRequest, Intervention, Task } from '@rouse/protocol';
import { Client } from '@rouse/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agentCliBin } from '../harness/agent-clis.js';
import { pidsWithArg, startClaudeAgent } from '../harness/claude-agent.js';
import { type CoordinatorProcess, startCoordinatorProcess } from '../harness/coordinator-process.js';
import { type FakeAnthropic, lingeringSettings, startFakeAnthropic } from '../harness/fake-anthropic.js';
import { writePolicyFile } from '../harness/policy-file.js';
import { alive } from '../harness/processes.js';
import { tempDir } from '../harness/temp-dir.js';
import { waitFor, waitForTaskEnd } from '../harness/wait.js';

const AGENT_TYPE = 'claude-e2e';
const POLICY = `
policies:
  - name: claude
    agent_type: ${AGENT_TYPE}
    heartbeat: { expected_interval: 200ms, timeout_factor: 10 }
    recovery_actions:
      - action: wake
        on_condition: stall_detected
        timeout: 20s
`;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

let coord: CoordinatorProcess;
let admin: Client;
let fake: FakeAnthropic;
beforeAll(async () => {
  agentCliBin('claude'); // not installed: every test here fails, naming the cause
  coord = await startCoordinatorProcess({ extraArgs: ['--policies', writePolicyFile(POLICY)] });
  admin = new Client({ url: coord.url, token: coord.adminToken });
});
afterAll(async () => {
  await coord?.kill('SIGTERM');
});

async function setup(options: { concurrency?: number; cliArgs?: string[] } = {}) {
  fake = await startFakeAnthropic();
  cleanups.push(() => fake.close());
  return agent(options);
}

async function agent(options: { concurrency?: number; cliArgs?: string[] } = {}) {
  const a = await startClaudeAgent(coord, fake, { agentType: AGENT_TYPE, ...options });
  cleanups.push(async () => {
    await a.stop();
  });
  return a;
}

async function final(id: string, timeoutMs = 45_000): Promise<Task> {
  try {
    return await waitForTaskEnd(admin, id, { timeoutMs, intervalMs: 100 });
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${await explain(id)}`);
  }
}

/** The task, its events and its last log lines: what a failing test prints. */
async function explain(id: string): Promise<string> {
  const t = await admin.getTask(id);
  const events = (await admin.getTaskEvents(id)).map((e) => `${e.from}→${e.to} ${JSON.stringify(e.details)}`);
  const tail = (await logs(id)).slice(-15).map((l) => l.slice(0, 300));
  return [
    `status ${t.status}, attempt ${t.attempt}, phase ${t.phase}, error ${JSON.stringify(t.error)}`,
    `session ${JSON.stringify(t.session)}`,
    ...events,
    ...tail,
  ].join('\n');
}

/** Create a task; a test that ends before it does cancels it, so it cannot reach the next test's agent. */
async function submit(req: CreateTaskRequest): Promise<Task> {
  const { task } = await admin.createTask(req);
  cleanups.push(async () => {
    if (!(await admin.getTask(task.id)).final) await admin.cancelTask(task.id, 'test over').catch(() => {});
  });
  return task;
}

async function logs(id: string): Promise<string[]> {
  return (await admin.getLogs(id)).lines.map((l) => `${l.stream}: ${l.text}`);
}

/** A file the model's Bash command writes (its pid, a marker), once it exists. */
async function fileWritten(path: string): Promise<string> {
  return waitFor(() => (existsSync(path) ? readFileSync(path, 'utf8').trim() || null : null), {
    what: `${path} to be written`,
    timeoutMs: 30_000,
    intervalMs: 50,
  });
}

interface ClaudeResult {
  message: string;
  usage: { inputTokens: number; outputTokens: number; cachedInputTokens: number };
  costUsd?: number;
  files: string[];
  sessionId: string;
}

describe('rouse agent --adapter claude with the pinned Claude Code', () => {
  it('1. completes: a Bash tool writes in the task directory, the final message is the result, usage and cost recorded, the events in the log', async () => {
    await setup();
    fake.script(
      { kind: 'bash', command: 'echo hello > hello.txt', usage: { input: 300, output: 30 } },
      { kind: 'answer', text: 'I wrote hello.txt.', usage: { input: 400, output: 12, cacheRead: 100 } },
    );
    const cwd = tempDir('rouse-claude-task-');
    const task = await submit({ type: 'claude', payload: { prompt: 'Write hello.txt', cwd } });
    const done = await final(task.id);
    expect(done.status).toBe('completed');
    expect(readFileSync(join(cwd, 'hello.txt'), 'utf8')).toBe('hello\n');
    const result = (await admin.getResult(task.id)).json as ClaudeResult;
    expect(result).toMatchObject({
      message: 'I wrote hello.txt.',
      usage: { inputTokens: 800, outputTokens: 42, cachedInputTokens: 100 },
      files: ['hello.txt'],
    });
    expect(result.costUsd).toBeGreaterThan(0);
    // The session id the adapter chose is the one the model API saw, saved as the task's session.
    expect(fake.sessionIds()).toEqual([result.sessionId]);
    expect(done.session).toMatchObject({ flavor: 'claude', sessionId: result.sessionId });
    const lines = await logs(task.id);
    expect(lines.some((l) => l.startsWith('stdout: {"type":"system","subtype":"init"'))).toBe(true);
    expect(lines.some((l) => l.startsWith('stdout: {"type":"assistant"') && l.includes('"tool_use"'))).toBe(
      true,
    );
    expect(lines.some((l) => l.startsWith('stdout: {"type":"result","subtype":"success"'))).toBe(true);
  });

  it('2. the agent SIGKILLed mid-turn: the task times out, an agent with another home resumes the same session, and the model receives the earlier conversation', async () => {
    const first = await setup();
    fake.script(
      { kind: 'bash', command: 'echo one > one.txt' },
      { kind: 'hang', text: 'Now the second step' },
      { kind: 'answer', text: 'Finished on the second agent.' },
    );
    const task = await submit({
      type: 'claude',
      maxAttempts: 3,
      timing: { heartbeatIntervalMs: 1000 }, // the lease of a dead agent runs out 3 s after its last beat
      payload: { prompt: 'Do it in two steps' },
    });
    // Mid-turn: the tool ran, its transcript travelled with the session, the model is streaming.
    await waitFor(() => fake.hanging() === 1, { what: 'the second model request', timeoutMs: 30_000 });
    const carried = await waitFor(
      async () => {
        const s = (await admin.getTask(task.id)).session as { sessionId: string; transcript: unknown } | null;
        return s?.transcript ? s : null;
      },
      { what: 'the transcript to be carried', timeoutMs: 10_000, intervalMs: 100 },
    ).catch(async (err) => {
      throw new Error(`${(err as Error).message}\n${await explain(task.id)}`);
    });
    const orphan = await first.cliPid(task.id, admin);
    expect(alive(orphan)).toBe(true);
    await first.stop('SIGKILL');
    // Claude Code runs in its own process group; the SIGKILLed agent's group guard stops it.
    await waitFor(() => !alive(orphan), {
      what: "the SIGKILLed agent's Claude Code to be gone",
      timeoutMs: 10_000,
    });
    await waitFor(async () => (await admin.getTaskEvents(task.id)).some((e) => e.to === 'timeout'), {
      what: 'the first attempt to time out',
      timeoutMs: 20_000,
      intervalMs: 100,
    });
    const second = await agent();
    expect(second.workDir).not.toBe(first.workDir);
    const done = await final(task.id);
    expect(done).toMatchObject({ status: 'completed', attempt: 2 });
    const result = (await admin.getResult(task.id)).json as ClaudeResult;
    expect(result).toMatchObject({ message: 'Finished on the second agent.', sessionId: carried.sessionId });
    expect(fake.sessionIds()).toEqual([carried.sessionId]);
    // The resumed request carried the earlier conversation: the prompt, the tool call and its result.
    const resumed = JSON.stringify(fake.messageRequests().at(-1)?.messages);
    expect(resumed).toContain('Do it in two steps');
    expect(resumed).toContain('echo one > one.txt');
    expect(resumed).toContain('tool_result');
    expect(resumed).toContain('Your previous attempt at this task was cut off');
    // …restored into the second agent's own home, under the folder of its own working directory.
    const projects = join(second.workDir, 'homes', 'claude', 'config', 'projects');
    const dirs = readdirSync(projects);
    expect(dirs.some((d) => d.includes(task.id.replace(/[^a-zA-Z0-9]/g, '-')))).toBe(true);
  });

  it('3. a stream that hangs: progress_stalled, the wake interrupts Claude Code and resumes the session with a nudge; the wake succeeded', async () => {
    const a = await setup();
    fake.script({ kind: 'hang', text: 'Let me think' }, { kind: 'answer', text: 'Done after the nudge.' });
    const task = await submit({
      type: 'claude',
      payload: { prompt: 'Think hard' },
      // Longer than Claude Code takes to start on a busy machine (up to ~3.5 s seen): while the resumed
      // CLI starts, nothing moves, and a shorter threshold would wake it again before its first line.
      timing: { stallTimeoutMs: 5000 },
    });
    const done = await final(task.id);
    expect(done.status).toBe('completed');
    expect(done.attempt).toBe(1);
    const result = (await admin.getResult(task.id)).json as ClaudeResult;
    expect(result.message).toBe('Done after the nudge.');
    // The resumed request: the same session, the earlier prompt, and the nudge.
    expect(fake.sessionIds()).toEqual([result.sessionId]);
    const last = JSON.stringify(fake.messageRequests().at(-1)?.messages);
    expect(last).toContain('Think hard');
    expect(last).toContain('You were interrupted because you seemed stuck');
    const agentId = a.agentId;
    const wake = await waitFor(
      async () => {
        const list = (await admin.listInterventions({ agentId })).interventions as Intervention[];
        return list.find((i) => i.action === 'wake' && i.state === 'succeeded') ?? null;
      },
      { what: 'the wake to succeed', timeoutMs: 20_000, intervalMs: 100 },
    );
    expect(wake).toMatchObject({ condition: 'progress_stalled', taskId: task.id });
    // The wake reached Claude Code while its stream hung: it dropped that request (it then prints
    // `[Request interrupted by user]` and an `error_during_execution` result, or at times nothing).
    const lines = await logs(task.id);
    expect(fake.abandoned(), lines.join('\n')).toBe(1);
    expect(lines.some((l) => l.includes('interrupting the CLI with SIGINT'))).toBe(true);
  });

  it('4. 429 with Retry-After: anthropic is rate_limited, tasks that require it wait, no attempt is burnt; when it recovers, both complete', async () => {
    await setup({ concurrency: 2 });
    fake.script(
      { kind: 'error', status: 429, retryAfterS: 3, times: 1000 },
      { kind: 'answer', text: 'First, after the rate limit.' },
    );
    const first = await submit({
      type: 'claude',
      requires: ['anthropic'],
      payload: { prompt: 'First' },
    });
    await waitFor(
      async () => {
        const res = await fetch(`${coord.url}/v1/dependencies`, {
          headers: { authorization: `Bearer ${coord.adminToken}` },
        });
        const { dependencies } = (await res.json()) as { dependencies: { name: string; state: string }[] };
        return dependencies.some((d) => d.name === 'anthropic' && d.state === 'rate_limited');
      },
      { what: 'anthropic to be rate_limited', timeoutMs: 20_000, intervalMs: 100 },
    );
    const second = await submit({
      type: 'claude',
      requires: ['anthropic'],
      payload: { prompt: 'Second' },
    });
    const held = await waitFor(
      async () => {
        const d = await admin.diagnose(second.id);
        return d.reasons.some((r) => r.code === 'dependency_unavailable') ? d : null;
      },
      { what: 'the second task to be held', timeoutMs: 10_000, intervalMs: 100 },
    );
    expect(held.status).toBe('created');
    expect((await admin.getTask(second.id)).attempt).toBe(0);
    fake.recover();
    const a = await final(first.id);
    const b = await final(second.id);
    expect(a).toMatchObject({ status: 'completed', attempt: 1 });
    expect(b).toMatchObject({ status: 'completed', attempt: 1 });
    expect(((await admin.getResult(first.id)).json as ClaudeResult).message).toBe(
      'First, after the rate limit.',
    );
  });

  it('5. Claude Code prints its result and does not exit (a SessionEnd hook that never returns): killed after the grace, the task completes', async () => {
    const marker = join(tempDir('rouse-claude-hook-'), 'hook-started');
    await setup({ cliArgs: ['--settings', lingeringSettings(marker)] });
    fake.script({ kind: 'answer', text: 'All done, lingering.' });
    const task = await submit({ type: 'claude', payload: { prompt: 'Finish' } });
    const done = await final(task.id);
    expect(done.status).toBe('completed');
    expect(((await admin.getResult(task.id)).json as ClaudeResult).message).toBe('All done, lingering.');
    // It did linger: the hook started after the result, and the adapter stopped the CLI itself.
    expect(existsSync(marker)).toBe(true);
    const sessionId = (done.session as { sessionId: string }).sessionId;
    expect(pidsWithArg(sessionId)).toEqual([]);
  });

  it('6. execution timeout: the CLI and the command it runs (a sleep) are killed, the adapter fails the attempt before the deadline', async () => {
    await setup();
    const cwd = tempDir('rouse-claude-task-');
    fake.script({ kind: 'bash', command: 'sleep 600 & echo $! > sleep.pid; wait' });
    const task = await submit({
      type: 'claude',
      maxAttempts: 1,
      timing: { executionTimeoutMs: 9000 },
      payload: { prompt: 'Sleep', cwd },
    });
    const sleepPid = Number(await fileWritten(join(cwd, 'sleep.pid')));
    expect(alive(sleepPid)).toBe(true);
    const done = await final(task.id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'execution_timeout', retryable: true });
    expect(done.error?.message).toMatch(/stopped before the execution timeout of 9000 ms/);
    expect(alive(sleepPid)).toBe(false);
  });

  it('6b. cancel kills Claude Code and the command it runs within a second', async () => {
    const a = await setup();
    const cwd = tempDir('rouse-claude-task-');
    fake.script({ kind: 'bash', command: 'sleep 600 & echo $! > sleep.pid; wait' });
    const task = await submit({ type: 'claude', payload: { prompt: 'Sleep', cwd } });
    const sleepPid = Number(await fileWritten(join(cwd, 'sleep.pid')));
    const cliPid = await a.cliPid(task.id, admin);
    const cancelled = a.cancelSeen(task.id);
    await admin.cancelTask(task.id, 'no longer needed');
    const at = await cancelled;
    await waitFor(() => !alive(cliPid) && !alive(sleepPid), {
      what: 'Claude Code and its sleep to be gone',
      timeoutMs: 5000,
      intervalMs: 10,
    });
    expect(Date.now() - at).toBeLessThan(1000);
    expect((await admin.getTask(task.id)).status).toBe('cancelled');
  });

  it('7. over its token budget: stopped as the response starts, failed for good with the reason', async () => {
    await setup();
    fake.script(
      { kind: 'bash', command: 'echo a > a.txt', usage: { input: 5000, output: 10 } },
      { kind: 'answer', text: 'never reached' },
    );
    const task = await submit({
      type: 'claude',
      maxAttempts: 3,
      payload: { prompt: 'Spend', maxTokens: 1000 },
    });
    const done = await final(task.id);
    expect(done).toMatchObject({ status: 'failed', attempt: 1 });
    expect(done.error).toMatchObject({
      code: 'resource_runaway',
      retryable: false,
      details: { limit: 'maxTokens', max: 1000 },
    });
    expect(done.error?.message).toMatch(/maxTokens is 1000/);
  });

  it('7b. maxBudgetUsd is passed to Claude Code, which stops itself: failed for good with its reason', async () => {
    await setup();
    fake.script(
      { kind: 'bash', command: 'echo a > a.txt', usage: { input: 5000, output: 100 } },
      { kind: 'answer', text: 'never reached' },
    );
    const task = await submit({
      type: 'claude',
      maxAttempts: 3,
      payload: { prompt: 'Spend', maxBudgetUsd: 0.01 },
    });
    const done = await final(task.id);
    expect(done).toMatchObject({ status: 'failed', attempt: 1 });
    expect(done.error).toMatchObject({ code: 'resource_runaway', retryable: false });
    expect(done.error?.message).toMatch(/Reached maximum budget/);
  });
});
