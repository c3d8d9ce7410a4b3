/**
 * Issue 11, tests 8 and 6 with the shell adapter, through a real coordinator and a real
 * `rouse agent --adapter shell` process: progress lines become progress, exit codes become outcomes
 * (retryable or not, a result file, stdin/env/args from the payload); the execution timeout kills the
 * group (a grandchild `sleep` included) and the adapter reports `fail` before the attempt deadline;
 * a cancel kills the command within a second; a wake restarts the command in the same attempt by
 * default, sends `--wake <signal>` to its group, or is only noted with `--wake none`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Intervention, Task } from '@rouse/protocol';
import { Client } from '@rouse/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AgentProcess, startAgentProcess } from '../harness/agent-process.js';
import { type CoordinatorProcess, startCoordinatorProcess } from '../harness/coordinator-process.js';
import { writePolicyFile } from '../harness/policy-file.js';
import { alive } from '../harness/processes.js';
import { tempDir } from '../harness/temp-dir.js';
import { waitFor, waitForTaskEnd } from '../harness/wait.js';

let coord: CoordinatorProcess;
let admin: Client;
let agent: AgentProcess;
beforeAll(async () => {
  coord = await startCoordinatorProcess();
  admin = new Client({ url: coord.url, token: coord.adminToken });
  agent = await startAgentProcess(coord, [
    '--adapter',
    'shell',
    '--types',
    'sh',
    '--concurrency',
    '4',
    '--non-retryable-exit',
    '2',
  ]);
});
afterAll(async () => {
  await agent?.stop();
  await coord?.kill('SIGTERM');
});
const pending: string[] = [];
afterEach(async () => {
  for (const id of pending.splice(0)) await admin.cancelTask(id).catch(() => undefined);
});

const FAST = { heartbeatIntervalMs: 200 };

async function submit(
  payload: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const { task } = await admin.createTask({ type: 'sh', payload: payload as never, timing: FAST, ...extra });
  pending.push(task.id);
  return task.id;
}

const final = (id: string, timeoutMs = 20_000): Promise<Task> => waitForTaskEnd(admin, id, { timeoutMs });

async function pidFromLog(id: string, re: RegExp): Promise<number> {
  return waitFor(
    async () => {
      for (const l of (await admin.getLogs(id)).lines) {
        const m = re.exec(l.text);
        if (m) return Number(m[1]);
      }
      return null;
    },
    { what: `${re} in the log of ${id}`, timeoutMs: 10_000, intervalMs: 50 },
  );
}

describe('rouse agent --adapter shell', () => {
  it('::progress lines become the task progress; exit 0 completes with the last stdout line', async () => {
    const id = await submit({
      command:
        'echo "::progress 0.25 compiling"; while [ ! -f go ]; do sleep 0.05; done; echo "::progress 0.75 testing"; echo "all good"',
    });
    const seen = await waitFor(
      async () => {
        const t = await admin.getTask(id);
        return t.progress === 0.25 ? t : null;
      },
      { what: 'progress 0.25', timeoutMs: 10_000, intervalMs: 50 },
    );
    expect(seen.phase).toBe('compiling');
    // the command waits for this file in its working directory (<work-dir>/work/<taskId>)
    const { writeFileSync } = await import('node:fs');
    writeFileSync(`${agent.workDir}/work/${id}/go`, '');
    const done = await final(id);
    expect(done.status).toBe('completed');
    expect(done.progress).toBe(0.75);
    expect(done.phase).toBe('testing');
    expect((await admin.getResult(id)).json).toEqual({ exitCode: 0, output: 'all good' });
    const logs = (await admin.getLogs(id)).lines.map((l) => l.text);
    expect(logs).toEqual(['::progress 0.25 compiling', '::progress 0.75 testing', 'all good']);
  });

  it('payload to argv, env and stdin; a result file as the result', async () => {
    const id = await submit({
      command: [
        '/bin/sh',
        '-c',
        'read x; printf "{\\"got\\": \\"%s-%s-%s\\"}" "$x" "$GREETING" "$1" > out.json',
        'sh',
      ],
      args: ['arg1'],
      env: { GREETING: 'hi' },
      stdin: 'from-stdin\n',
      resultFile: 'out.json',
    });
    const done = await final(id);
    expect(done.status).toBe('completed');
    expect((await admin.getResult(id)).json).toEqual({ got: 'from-stdin-hi-arg1' });
  });

  it('exit codes become outcomes: retryable by default, final for --non-retryable-exit codes', async () => {
    const retry = await submit({ command: 'echo broken >&2; exit 3' }, { maxAttempts: 2 });
    const failed = await final(retry);
    expect(failed.status).toBe('failed');
    expect(failed.attempt).toBe(2);
    expect(failed.error).toMatchObject({
      code: 'exit_code',
      retryable: true,
      message: 'the command exited with code 3',
    });
    const finalId = await submit({ command: 'exit 2' }, { maxAttempts: 3 });
    const final2 = await final(finalId);
    expect(final2.attempt).toBe(1);
    expect(final2.error).toMatchObject({ code: 'exit_code', retryable: false });
    const bad = await final(await submit({ command: [] }));
    expect(bad.error).toMatchObject({ code: 'bad_payload', retryable: false });
  });

  it('a command whose program does not exist or cannot be executed fails for good (command_not_found)', async () => {
    const missing = await final(await submit({ command: ['/nonexistent/bin', '-x'] }, { maxAttempts: 3 }));
    expect(missing.status).toBe('failed');
    expect(missing.attempt).toBe(1);
    expect(missing.error).toMatchObject({
      code: 'command_not_found',
      retryable: false,
      message: 'the command cannot be run: /nonexistent/bin does not exist',
    });
    const onPath = await final(await submit({ command: ['rouse-no-such-program'] }, { maxAttempts: 3 }));
    expect(onPath.attempt).toBe(1);
    expect(onPath.error).toMatchObject({ code: 'command_not_found', retryable: false });
    expect(onPath.error?.message).toMatch(
      /^the command cannot be run: no "rouse-no-such-program" on PATH \(/,
    );
    const dir = tempDir('rouse-shell-noexec-');
    writeFileSync(join(dir, 'script.sh'), 'echo hi\n', { mode: 0o644 });
    const noExec = await final(await submit({ command: ['./script.sh'], cwd: dir }, { maxAttempts: 3 }));
    expect(noExec.attempt).toBe(1);
    expect(noExec.error).toMatchObject({
      code: 'command_not_found',
      retryable: false,
      message: `the command cannot be run: ${join(dir, 'script.sh')} is not executable`,
    });
  });

  it('execution timeout: the group is killed, grandchild sleep included, and the adapter fails before the attempt deadline', async () => {
    const id = await submit(
      { command: 'trap \'\' TERM; sleep 300 & echo "grandchild $!"; wait' },
      { maxAttempts: 1, timing: { ...FAST, executionTimeoutMs: 2000 } },
    );
    const grandchild = await pidFromLog(id, /^grandchild (\d+)$/);
    expect(alive(grandchild)).toBe(true);
    const done = await final(id);
    // the adapter's own failure, not the coordinator's `timeout` at the attempt deadline
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'execution_timeout', retryable: true });
    expect(done.error?.message).toBe('the command was stopped before the execution timeout of 2000 ms');
    const events = await admin.getTaskEvents(id);
    const started = events.find((e) => e.to === 'running')!;
    const failed = events.find((e) => e.to === 'failed')!;
    expect(failed.at - started.at).toBeLessThan(done.timing.attemptDeadlineMs!);
    expect(alive(grandchild)).toBe(false);
  });

  it("a process that left the command's group is stopped with it, and the adapter notes it in the log", async () => {
    const id = await submit(
      { command: 'trap \'\' TERM; setsid sleep 300 </dev/null >/dev/null 2>&1 & echo "stray $!"; wait' },
      { maxAttempts: 1, timing: { ...FAST, executionTimeoutMs: 2500 } },
    );
    const stray = await pidFromLog(id, /^stray (\d+)$/);
    expect(alive(stray)).toBe(true);
    const done = await final(id);
    expect(done.error).toMatchObject({ code: 'execution_timeout' });
    expect(alive(stray)).toBe(false);
    const lines = (await admin.getLogs(id)).lines;
    expect(lines).toContainEqual(
      expect.objectContaining({
        stream: 'adapter',
        text: `SIGTERM also went to 1 process outside the command's process group: ${stray} (sleep)`,
      }),
    );
  });

  it('cancel kills the command and its grandchild within a second', async () => {
    const id = await submit({
      command: 'trap \'\' TERM; sleep 300 & echo "grandchild $!"; echo "shell $$"; wait',
    });
    const grandchild = await pidFromLog(id, /^grandchild (\d+)$/);
    const shell = await pidFromLog(id, /^shell (\d+)$/);
    await admin.cancelTask(id, 'not needed');
    const cancelled = await agent.child.waitForLine<{ event?: string; taskId?: string; at: number }>(
      (m) => m?.event === 'cancelled' && m.taskId === id,
    );
    await waitFor(() => !alive(grandchild) && !alive(shell), {
      what: 'the group to be gone',
      timeoutMs: 5000,
      intervalMs: 10,
    });
    expect(Date.now() - cancelled.at).toBeLessThan(1000);
  });
});

describe('rouse agent --adapter shell: wake', () => {
  it('by default a wake restarts the command in the same attempt (SIGINT to its group first)', async () => {
    const id = await submit({
      // the first run hangs; the run after the wake finishes
      command:
        'n=$(cat runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > runs; echo "run $n $$"; ' +
        'if [ "$n" -lt 2 ]; then sleep 300; fi; echo "done after $n runs"',
    });
    const first = await pidFromLog(id, /^run 1 (\d+)$/);
    await admin.sendCommand(agent.agentId, { type: 'wake', taskId: id, reason: 'stuck' });
    const done = await final(id);
    expect(done.status).toBe('completed');
    expect(done.attempt).toBe(1); // no attempt burnt
    expect((await admin.getResult(id)).json).toEqual({ exitCode: 0, output: 'done after 2 runs' });
    expect(alive(first)).toBe(false);
    const notes = (await admin.getLogs(id)).lines.filter((l) => l.stream === 'adapter').map((l) => l.text);
    expect(notes).toContain(
      'wake (stuck): interrupting the command (SIGINT to its group) to restart it (1 of 3)',
    );
  });

  it('--wake none: the wake is only noted; the command runs on undisturbed', async () => {
    const quiet = await startAgentProcess(coord, [
      '--adapter',
      'shell',
      '--types',
      'sh-none',
      '--wake',
      'none',
    ]);
    try {
      const { task } = await admin.createTask({
        type: 'sh-none',
        timing: FAST,
        payload: { command: 'echo ready; while [ ! -e go ]; do sleep 0.1; done; echo "finished in one run"' },
      });
      pending.push(task.id);
      await waitFor(async () => (await admin.getLogs(task.id)).lines.some((l) => l.text === 'ready'), {
        what: 'the command to be ready',
      });
      await admin.sendCommand(quiet.agentId, { type: 'wake', taskId: task.id, reason: 'poke' });
      await waitFor(
        async () =>
          (await admin.getLogs(task.id)).lines.some((l) => l.text === 'wake (poke): ignored (--wake none)'),
        { what: 'the wake noted' },
      );
      const cwd = join(quiet.workDir, 'work', task.id);
      writeFileSync(join(cwd, 'go'), '');
      const done = await final(task.id);
      expect(done.status).toBe('completed');
      expect((await admin.getResult(task.id)).json).toEqual({ exitCode: 0, output: 'finished in one run' });
      expect((await admin.getLogs(task.id)).lines.filter((l) => l.text === 'ready')).toHaveLength(1);
    } finally {
      await quiet.stop();
    }
  });

  it('--wake <signal> sends that signal to the command group, which handles it', async () => {
    const sig = await startAgentProcess(coord, ['--adapter', 'shell', '--types', 'sh-sig', '--wake', 'USR1']);
    try {
      const { task } = await admin.createTask({
        type: 'sh-sig',
        timing: FAST,
        payload: {
          command: "trap 'echo woken by USR1; exit 0' USR1; echo ready; while :; do sleep 0.1; done",
        },
      });
      pending.push(task.id);
      await waitFor(async () => (await admin.getLogs(task.id)).lines.some((l) => l.text === 'ready'), {
        what: 'the command to be ready',
      });
      await admin.sendCommand(sig.agentId, { type: 'wake', taskId: task.id });
      const done = await final(task.id);
      expect(done.status).toBe('completed');
      expect((await admin.getResult(task.id)).json).toEqual({ exitCode: 0, output: 'woken by USR1' });
    } finally {
      await sig.stop();
    }
  });
});

describe('rouse agent --adapter shell: the recovery ladder', () => {
  it('a ladder wake on a stalled command restarts it; the phase says so and the stall closes: the wake succeeded', async () => {
    const policed = await startCoordinatorProcess({
      extraArgs: [
        '--policies',
        writePolicyFile(`
policies:
  - name: shell
    agent_type: shell
    heartbeat: { expected_interval: 200ms, timeout_factor: 5 }
    recovery_actions:
      - action: wake
        on_condition: stall_detected
        timeout: 4s
`),
      ],
    });
    const ladderAdmin = new Client({ url: policed.url, token: policed.adminToken });
    const shell = await startAgentProcess(policed, ['--adapter', 'shell', '--types', 'sh-ladder']);
    try {
      const { task } = await ladderAdmin.createTask({
        type: 'sh-ladder',
        timing: { ...FAST, stallTimeoutMs: 1500 },
        payload: {
          // the first run hangs after its progress line; a restarted run waits, silent, for a file
          command:
            'if [ ! -e started ]; then touch started; echo "::progress 0.2 compiling"; sleep 300; fi; ' +
            'while [ ! -e go ]; do sleep 0.1; done; echo "done after the wake"',
        },
      });
      const wake = await waitFor(
        async () => {
          const list = (await ladderAdmin.listInterventions({ agentId: shell.agentId }))
            .interventions as Intervention[];
          const first = list.find((i) => i.action === 'wake');
          return first !== undefined && first.state !== 'pending' && first.state !== 'held' ? first : null;
        },
        { what: "the ladder's wake to be judged", timeoutMs: 20_000, intervalMs: 100 },
      );
      expect(wake).toMatchObject({
        condition: 'progress_stalled',
        state: 'succeeded',
        reason: 'the condition closed after the wake',
      });
      const restarted = await ladderAdmin.getTask(task.id);
      expect(restarted.progress).toBe(0.2);
      expect(restarted.phase).toMatch(/^compiling · restarted \d+×$/);
      writeFileSync(join(shell.workDir, 'work', task.id, 'go'), '');
      const done = await waitForTaskEnd(ladderAdmin, task.id, { timeoutMs: 20_000 });
      expect(done.status).toBe('completed');
      expect(done.attempt).toBe(1);
      expect((await ladderAdmin.getResult(task.id)).json).toEqual({
        exitCode: 0,
        output: 'done after the wake',
      });
    } finally {
      await shell.stop();
      await policed.kill('SIGTERM');
    }
  });
});
