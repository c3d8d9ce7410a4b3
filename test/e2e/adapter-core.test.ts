/**
 * The generic coding-agent adapter (`cliTaskHandler`) through a real coordinator and a real SDK
 * worker, with the tests' `fake` flavor: a stand-in CLI (test/fixtures/fake-agent-cli.mjs) that
 * prints the adapter's own event shape and plays a script from its prompt. Shows completion (result,
 * usage, changed files, session saved, events in the log), the final-result grace, the budget guard,
 * a wake resuming the same session with a nudge, the execution timeout killing a grandchild before
 * the deadline, a cancel killing the CLI within a second, a foreign SIGKILL never being success, a
 * retry on another agent (another home) resuming from the transcript carried as a task blob, and the
 * same adapter run by a real `rouse agent` process; a budget breach opening `resource_runaway` on the
 * agent for the task; and a SIGKILLed `rouse agent` taking its CLI's group with it.
 */
import { chmodSync, copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Task } from '@rouse/protocol';
import { Client, Worker } from '@rouse/sdk';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type CliTaskOptions, cliTaskHandler } from '../../packages/agent-host/src/adapters/cli-task.js';
import { fakeFlavor, fakeTranscript } from '../../packages/agent-host/src/adapters/fake/fake-flavor.js';
import { startAgentProcess } from '../harness/agent-process.js';
import { type CoordinatorProcess, startCoordinatorProcess } from '../harness/coordinator-process.js';
import { alive } from '../harness/processes.js';
import { tempDir } from '../harness/temp-dir.js';
import { waitFor, waitForTaskEnd } from '../harness/wait.js';

const FAKE_CLI = fileURLToPath(new URL('../fixtures/fake-agent-cli.mjs', import.meta.url));

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

let coord: CoordinatorProcess | null = null;
afterAll(async () => {
  await coord?.kill('SIGTERM');
});
async function coordinator(): Promise<CoordinatorProcess> {
  if (coord === null) {
    coord = await startCoordinatorProcess();
  }
  return coord;
}

async function setup(options: Partial<CliTaskOptions> = {}) {
  const c = await coordinator();
  const admin = new Client({ url: c.url, token: c.adminToken });
  const dataDir = tempDir('rouse-adapter-');
  const worker = new Worker({
    url: c.url,
    token: c.agentToken,
    agentType: 'fake-agent',
    handlers: {
      fake: cliTaskHandler({ flavor: fakeFlavor, dataDir, bin: FAKE_CLI, finalGraceMs: 300, ...options }),
    },
    heartbeatIntervalMs: 200,
    shutdownSignals: false,
    shutdownGraceMs: 300,
    waitMs: 1000,
    spoolDir: tempDir('rouse-spool-'),
  });
  await worker.start();
  cleanups.push(() => worker.stop());
  return { admin, worker, dataDir, home: `${dataDir}/homes/fake` };
}

const script = (steps: unknown[], onResume?: unknown[]) =>
  `do the thing FAKE_SCRIPT:${JSON.stringify(onResume ? { steps, onResume } : { steps })}`;

const final = (admin: Client, id: string, timeoutMs = 20_000): Promise<Task> =>
  waitForTaskEnd(admin, id, { timeoutMs });

async function logText(admin: Client, id: string): Promise<string[]> {
  return (await admin.getLogs(id)).lines.map((l) => `${l.stream}: ${l.text}`);
}

async function noticePid(admin: Client, id: string, re: RegExp): Promise<number> {
  return waitFor(
    async () => {
      for (const l of await logText(admin, id)) {
        const m = re.exec(l);
        if (m) return Number(m[1]);
      }
      return null;
    },
    { what: `a line ${re} in the log of ${id}`, timeoutMs: 10_000, intervalMs: 50 },
  );
}

describe('cliTaskHandler with the fake flavor', () => {
  it('completes: the final message, usage, the changed file, the session saved, every line in the log', async () => {
    const { admin } = await setup();
    const { task } = await admin.createTask({
      type: 'fake',
      payload: {
        prompt: script([
          { emit: { type: 'turn_started' } },
          { emit: { type: 'tool_started', id: 'c1', name: 'shell' } },
          { write: { path: 'hello.txt', content: 'hi' } },
          { emit: { type: 'tool_finished', id: 'c1' } },
          { emit: { type: 'item_completed', kind: 'command_execution' } },
          { emit: { type: 'message', text: 'I wrote hello.txt' } },
          { emit: { type: 'usage', inputTokens: 120, outputTokens: 30, cumulative: true } },
          { emit: { type: 'result', ok: true, costUsd: 0.01 } },
        ]),
      },
    });
    const done = await final(admin, task.id);
    expect(done.status).toBe('completed');
    const result = (await admin.getResult(task.id)).json as Record<string, unknown>;
    expect(result).toMatchObject({
      message: 'I wrote hello.txt',
      usage: { inputTokens: 120, outputTokens: 30, cachedInputTokens: 0 },
      costUsd: 0.01,
      files: ['hello.txt'],
    });
    expect(typeof result.sessionId).toBe('string');
    expect(done.session).toMatchObject({ flavor: 'fake', sessionId: result.sessionId });
    expect(done.progress).toBeGreaterThan(0);
    const logs = await logText(admin, task.id);
    expect(logs).toContain('stdout: {"type":"message","text":"I wrote hello.txt"}');
    expect(logs.some((l) => l.startsWith('stdout: {"type":"session"'))).toBe(true);
  });

  it('a CLI that prints its result and hangs is killed after the grace, and the task completes', async () => {
    const { admin } = await setup();
    const { task } = await admin.createTask({
      type: 'fake',
      payload: {
        prompt: script([
          { ignoreSigterm: true },
          { emit: { type: 'result', ok: true, message: 'all done' } },
          { hang: true },
        ]),
      },
    });
    const done = await final(admin, task.id);
    expect(done.status).toBe('completed');
    expect(((await admin.getResult(task.id)).json as { message: string }).message).toBe('all done');
    const pid = await noticePid(admin, task.id, /"pid (\d+)"/);
    expect(alive(pid)).toBe(false);
  });

  it('over its token budget: stopped, failed for good with the reason as a resource runaway', async () => {
    const { admin } = await setup();
    const { task } = await admin.createTask({
      type: 'fake',
      maxAttempts: 3,
      payload: {
        maxTokens: 1000,
        prompt: script([
          { emit: { type: 'usage', inputTokens: 600, outputTokens: 100, cumulative: false } },
          { sleep: 100 },
          { emit: { type: 'usage', inputTokens: 600, outputTokens: 100, cumulative: false } },
          { hang: true },
        ]),
      },
    });
    const done = await final(admin, task.id);
    expect(done.status).toBe('failed');
    expect(done.attempt).toBe(1);
    expect(done.error).toMatchObject({
      code: 'resource_runaway',
      retryable: false,
      message: 'budget exceeded: 1400 tokens spent, maxTokens is 1000',
      details: { limit: 'maxTokens', max: 1000, used: 1400 },
    });
    const pid = await noticePid(admin, task.id, /"pid (\d+)"/);
    expect(alive(pid)).toBe(false);
  });

  it('a bad payload fails for good with a clear message', async () => {
    const { admin } = await setup();
    const { task } = await admin.createTask({ type: 'fake', payload: { cwd: 'relative' } });
    const done = await final(admin, task.id);
    expect(done.error).toMatchObject({
      code: 'bad_payload',
      retryable: false,
      message: 'payload.prompt must be a non-empty string',
    });
  });

  it('a wake that cut the CLI off before it stored its session: the resume finds nothing, the same attempt starts afresh and completes', async () => {
    const { admin, worker } = await setup();
    const { task } = await admin.createTask({
      type: 'fake',
      payload: {
        prompt: script([
          { dropSession: true },
          { hangOnce: 'hung.marker' },
          { emit: { type: 'message', text: 'fresh' } },
          { emit: { type: 'result', ok: true } },
        ]),
      },
    });
    await noticePid(admin, task.id, /"pid (\d+)"/);
    await admin.sendCommand(worker.agentId!, { type: 'wake', taskId: task.id, reason: 'test' });
    const done = await final(admin, task.id);
    expect(done).toMatchObject({ status: 'completed', attempt: 1 });
    expect(((await admin.getResult(task.id)).json as { message: string }).message).toBe('fresh');
    const logs = await logText(admin, task.id);
    expect(
      logs.some((l) => /the CLI did not resume session \S+ \(.*\); starting a new session/.test(l)),
    ).toBe(true);
  });

  it('a wake interrupts the hung turn and resumes the same session with the nudge; the task completes', async () => {
    const { admin, worker, home } = await setup();
    const { task } = await admin.createTask({
      type: 'fake',
      payload: {
        prompt: script(
          [{ emit: { type: 'turn_started' } }, { hang: true }],
          [{ emit: { type: 'message', text: 'unstuck' } }, { emit: { type: 'result', ok: true } }],
        ),
      },
    });
    const pid = await noticePid(admin, task.id, /"pid (\d+)"/);
    await admin.sendCommand(worker.agentId!, { type: 'wake', taskId: task.id, reason: 'test' });
    const done = await final(admin, task.id);
    expect(done.status).toBe('completed');
    const result = (await admin.getResult(task.id)).json as { message: string; sessionId: string };
    expect(result.message).toBe('unstuck');
    expect(alive(pid)).toBe(false);
    const prompts = await fakeTranscript(home, result.sessionId);
    expect(prompts).toHaveLength(2);
    expect(prompts[1]).toMatch(
      /^You were interrupted because you seemed stuck \(test\); continue the task: do the thing/,
    );
    const logs = await logText(admin, task.id);
    expect(logs).toContain('stdout: {"type":"notice","detail":"resumed with 1 earlier prompts"}');
    expect(done.phase).toMatch(/resumed 1×/);
  });

  it('execution timeout: the group is killed, grandchild included, and the adapter fails before the SDK and the deadline', async () => {
    const { admin } = await setup();
    const { task } = await admin.createTask({
      type: 'fake',
      maxAttempts: 1,
      timing: { executionTimeoutMs: 3000 },
      payload: { prompt: script([{ grandchild: true }, { ignoreSigterm: true }, { hang: true }]) },
    });
    const grandchild = await noticePid(admin, task.id, /"grandchild (\d+)"/);
    const done = await final(admin, task.id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'execution_timeout', retryable: true });
    expect(done.error?.message).toMatch(/stopped before the execution timeout of 3000 ms/);
    expect(alive(grandchild)).toBe(false);
  });

  it('cancel kills the CLI and its grandchild within a second', async () => {
    const { admin, worker } = await setup();
    const { task } = await admin.createTask({
      type: 'fake',
      payload: { prompt: script([{ grandchild: true }, { ignoreSigterm: true }, { hang: true }]) },
    });
    const cancelledAt = new Promise<number>((resolve) => worker.on('cancelled', () => resolve(Date.now())));
    const grandchild = await noticePid(admin, task.id, /"grandchild (\d+)"/);
    const pid = await noticePid(admin, task.id, /"pid (\d+)"/);
    await admin.cancelTask(task.id, 'no longer needed');
    const at = await cancelledAt;
    // the CLI ignores SIGTERM: the group is SIGKILLed after the cancel grace (500 ms)
    await waitFor(() => !alive(pid) && !alive(grandchild), {
      what: 'the CLI to be gone',
      timeoutMs: 5000,
      intervalMs: 10,
    });
    expect(Date.now() - at).toBeLessThan(1000);
    expect((await admin.getTask(task.id)).status).toBe('cancelled');
  });

  it('a SIGKILL the adapter did not send is never a success; the retry resumes the carried session', async () => {
    const { admin, home } = await setup();
    const { task } = await admin.createTask({
      type: 'fake',
      maxAttempts: 2,
      timing: { heartbeatIntervalMs: 200 },
      payload: {
        prompt: script(
          [{ emit: { type: 'message', text: 'half way' } }, { hang: true }],
          [{ emit: { type: 'result', ok: true, message: 'resumed and done' } }],
        ),
      },
    });
    const pid = await noticePid(admin, task.id, /"pid (\d+)"/);
    process.kill(pid, 'SIGKILL');
    const done = await final(admin, task.id);
    expect(done.status).toBe('completed');
    expect(done.attempt).toBe(2);
    const result = (await admin.getResult(task.id)).json as { message: string; sessionId: string };
    expect(result.message).toBe('resumed and done');
    const events = await admin.getTaskEvents(task.id);
    const failed = events.find((e) => e.to === 'failed');
    expect(JSON.stringify(failed?.details)).toMatch(/killed_by_signal/);
    expect(await fakeTranscript(home, result.sessionId)).toHaveLength(2);
  });

  it('a retry on another agent with another home restores the carried transcript and resumes the session', async () => {
    const first = await setup();
    const { admin } = first;
    const { task } = await admin.createTask({
      type: 'fake',
      maxAttempts: 2,
      payload: {
        prompt: script(
          [{ emit: { type: 'item_completed', kind: 'agent_message' } }, { hang: true }],
          [{ emit: { type: 'result', ok: true, message: 'resumed elsewhere' } }],
        ),
      },
    });
    const carried = await waitFor(
      async () => {
        const s = (await admin.getTask(task.id)).session as {
          sessionId?: string;
          transcript?: { id: string } | null;
        } | null;
        return s?.transcript ? s : null;
      },
      { what: 'the transcript to be carried', timeoutMs: 10_000, intervalMs: 50 },
    );
    await first.worker.stop(); // the first agent goes away: its attempt is handed back
    const second = await setup();
    expect(second.home).not.toBe(first.home);
    const done = await final(admin, task.id);
    expect(done.status).toBe('completed');
    expect(done.attempt).toBe(2);
    const result = (await admin.getResult(task.id)).json as { message: string; sessionId: string };
    expect(result).toMatchObject({ message: 'resumed elsewhere', sessionId: carried.sessionId });
    // the second home got the first attempt's transcript, then its own resume
    const prompts = await fakeTranscript(second.home, carried.sessionId!);
    expect(prompts).toHaveLength(2);
    expect(prompts[1]).toMatch(/^Your previous attempt at this task was cut off/);
    const logs = await logText(admin, task.id);
    expect(logs).toContain('stdout: {"type":"notice","detail":"resumed with 1 earlier prompts"}');
  });

  it('runs through a real `rouse agent --adapter fake` process (the flavor registry), files and usage in the result', async () => {
    const c = await coordinator();
    const admin = new Client({ url: c.url, token: c.adminToken });
    const agent = await startAgentProcess(
      c,
      ['--adapter', 'fake', '--types', 'fake-cli', '--bin', FAKE_CLI],
      {
        ROUSE_ADAPTER_TEST_FLAVORS: '1',
      },
    );
    cleanups.push(async () => void (await agent.stop()));
    const { task } = await admin.createTask({
      type: 'fake-cli',
      payload: {
        prompt: script([
          { write: { path: 'a.txt', content: 'a' } },
          { emit: { type: 'usage', inputTokens: 7, outputTokens: 3, cumulative: false } },
          { emit: { type: 'result', ok: true, message: 'via rouse agent' } },
        ]),
      },
    });
    expect((await final(admin, task.id)).status).toBe('completed');
    expect((await admin.getResult(task.id)).json).toMatchObject({
      message: 'via rouse agent',
      files: ['a.txt'],
      usage: { inputTokens: 7, outputTokens: 3 },
    });
    await agent.child.waitForLine<{ event?: string }>((m) => m?.event === 'completed');
    expect(await agent.stop()).toEqual({ code: 0, signal: null }); // SIGTERM: a clean stop
  });

  it('a CLI gone after the start fails the attempt as bin_not_found (retryable) and the agent takes no more tasks (exit 1)', async () => {
    const c = await coordinator();
    const admin = new Client({ url: c.url, token: c.adminToken });
    const bin = join(tempDir('rouse-gone-bin-'), 'fake-agent-cli');
    copyFileSync(FAKE_CLI, bin);
    chmodSync(bin, 0o755);
    const agent = await startAgentProcess(c, ['--adapter', 'fake', '--types', 'fake-gone', '--bin', bin], {
      ROUSE_ADAPTER_TEST_FLAVORS: '1',
    });
    cleanups.push(async () => void (await agent.stop()));
    const first = (await admin.createTask({ type: 'fake-gone', payload: { prompt: 'before' } })).task;
    expect((await final(admin, first.id)).status).toBe('completed');
    rmSync(bin); // uninstalled under the running agent
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(
        (await admin.createTask({ type: 'fake-gone', maxAttempts: 5, payload: { prompt: 'after' } })).task.id,
      );
    }
    expect(await agent.child.exited).toEqual({ code: 1, signal: null });
    const stopping = await agent.child.waitForLine<{ event?: string; reason?: string }>(
      (m) => m?.event === 'stopping',
    );
    expect(stopping.reason).toBe(
      `the CLI cannot be run: ${bin} does not exist; this agent takes no more tasks`,
    );
    // one attempt (two at most, a claim carried with the failure) was spent, not the queue's
    const tasks = await Promise.all(ids.map((id) => admin.getTask(id)));
    const failed = tasks.filter((t) => t.error !== null);
    expect(failed.length).toBeGreaterThanOrEqual(1);
    expect(failed.length).toBeLessThanOrEqual(2);
    expect(failed[0]!.error).toMatchObject({ code: 'bin_not_found', retryable: true });
    for (const t of tasks) {
      expect(t.attempt).toBeLessThanOrEqual(1);
      expect(t.finishedAt).toBeNull(); // waiting for another agent (failed ones: their retry)
    }
  });
});

describe('the budget guard and the watchdog', () => {
  it('a budget breach opens resource_runaway on the agent for the task, the spend as evidence; the task fails for good', async () => {
    const c = await coordinator();
    const admin = new Client({ url: c.url, token: c.adminToken });
    const agent = await startAgentProcess(
      c,
      ['--adapter', 'fake', '--types', 'fake-budget', '--bin', FAKE_CLI, '--max-tokens', '1000'],
      { ROUSE_ADAPTER_TEST_FLAVORS: '1' },
    );
    cleanups.push(async () => void (await agent.stop()));
    const { task } = await admin.createTask({
      type: 'fake-budget',
      maxAttempts: 3,
      timing: { heartbeatIntervalMs: 200 },
      payload: {
        // it ignores SIGTERM: the adapter's stop takes its grace (2 s) before SIGKILL
        prompt: script([
          { ignoreSigterm: true },
          { emit: { type: 'usage', inputTokens: 600, outputTokens: 100, cumulative: false } },
          { sleep: 100 },
          { emit: { type: 'usage', inputTokens: 600, outputTokens: 100, cumulative: false } },
          { hang: true },
        ]),
      },
    });
    const evidence = { rule: 'task_budget', taskId: task.id, kind: 'tokens', limit: 1000, used: 1400 };
    // GET /v1/agents/{id}: open while the adapter stops the CLI
    const open = await waitFor(
      async () =>
        (await admin.getAgent(agent.agentId)).conditions.find(
          (x) => x.condition === 'resource_runaway' && x.taskId === task.id,
        ),
      { what: 'resource_runaway open on the agent', timeoutMs: 20_000 },
    );
    expect(open.evidence).toEqual(evidence);
    const done = await final(admin, task.id);
    expect(done).toMatchObject({
      status: 'failed',
      attempt: 1,
      error: {
        code: 'resource_runaway',
        retryable: false,
        message: 'budget exceeded: 1400 tokens spent, maxTokens is 1000',
      },
    });
    // closed once the agent no longer holds the task; the evidence stays in the history
    const closed = await waitFor(
      async () =>
        (await admin.agentConditions(agent.agentId, { open: false })).find(
          (x) => x.condition === 'resource_runaway' && x.taskId === task.id,
        ),
      { what: 'resource_runaway closed', timeoutMs: 20_000 },
    );
    expect(closed.closeReason).toBe('the task is no longer held');
    expect(closed.evidence).toEqual(evidence);
  });
});

describe('the agent SIGKILLed', () => {
  it("takes its CLI's process group with it, grandchild included (the group guard)", async () => {
    const c = await coordinator();
    const admin = new Client({ url: c.url, token: c.adminToken });
    const agent = await startAgentProcess(
      c,
      ['--adapter', 'fake', '--types', 'fake-orphan', '--bin', FAKE_CLI],
      {
        ROUSE_ADAPTER_TEST_FLAVORS: '1',
      },
    );
    cleanups.push(async () => void (await agent.stop()));
    const { task } = await admin.createTask({
      type: 'fake-orphan',
      maxAttempts: 1,
      payload: { prompt: script([{ grandchild: true }, { hang: true }]) },
    });
    const pid = await noticePid(admin, task.id, /"pid (\d+)"/);
    const grandchild = await noticePid(admin, task.id, /"grandchild (\d+)"/);
    expect(alive(pid)).toBe(true);
    expect(alive(grandchild)).toBe(true);
    agent.child.kill('SIGKILL');
    expect((await agent.child.exited).signal).toBe('SIGKILL');
    await waitFor(() => !alive(pid) && !alive(grandchild), {
      what: 'the CLI and its grandchild to be gone',
      timeoutMs: 10_000,
    });
  });
});
