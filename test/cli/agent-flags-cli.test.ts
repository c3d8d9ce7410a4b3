/**
 * `rouse agent`'s shell `--wake` flag refused where it does not apply or with a bad value; and its budget flags (--max-turns, --max-budget-usd, --max-tokens, --max-cost-usd,
 * --max-wall-clock): documented in --help, bad values refused as usage errors (exit 2) before anything
 * connects, refused for the shell adapter, and taking effect as the defaults of every task the agent
 * runs (a payload's own field wins), through a real `rouse agent` process with the tests' fake flavor;
 * a refused token is pointed at the enrollment token (--token / ROUSE_AGENT_TOKEN).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Task } from '@rouse/protocol';
import { Client } from '@rouse/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { type AgentProcess, startAgentProcess } from '../harness/agent-process.js';
import { type CoordinatorProcess, startCoordinatorProcess } from '../harness/coordinator-process.js';
import { tempDir } from '../harness/temp-dir.js';
import { waitForTaskEnd } from '../harness/wait.js';
import { runCli, spawnCliRunning, waitForExit } from './run-cli.js';

const FAKE_CLI = fileURLToPath(new URL('../fixtures/fake-agent-cli.mjs', import.meta.url));
const NO_COORDINATOR = { ROUSE_URL: 'http://127.0.0.1:1', ROUSE_AGENT_TOKEN: 'enroll-token' };

let coord: CoordinatorProcess | null = null;
let agent: AgentProcess | null = null;
afterAll(async () => {
  await agent?.stop();
  await coord?.kill('SIGTERM');
});

describe('rouse agent budget flags', () => {
  it('are documented in --help', async () => {
    const r = await runCli(['agent', '--help'], { cwd: tempDir() });
    expect(r.code).toBe(0);
    for (const flag of [
      '--max-turns <n>',
      '--max-budget-usd <usd>',
      '--max-tokens <n>',
      '--max-cost-usd <usd>',
      '--max-wall-clock <duration>',
    ]) {
      expect(r.stdout).toContain(flag);
    }
    expect(r.stdout).toContain('fails for good with code resource_runaway');
  });

  it('refuse bad values and the shell adapter with a usage error (exit 2), before connecting', async () => {
    const cases: [string[], string][] = [
      [['--max-turns', '0'], '--max-turns must be a positive integer (got "0")'],
      [['--max-tokens', '1.5'], '--max-tokens must be a positive integer (got "1.5")'],
      [['--max-budget-usd', 'lots'], '--max-budget-usd must be a positive number of dollars'],
      [['--max-cost-usd', '-1'], '--max-cost-usd must be a positive number of dollars'],
      [['--max-wall-clock', '30'], '--max-wall-clock'],
    ];
    for (const [flags, message] of cases) {
      const r = await runCli(['agent', '--adapter', 'codex', '--types', 'codex', ...flags], {
        cwd: tempDir(),
        env: NO_COORDINATOR,
      });
      expect(r.code, `${flags.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(message);
    }
    const shell = await runCli(['agent', '--adapter', 'shell', '--types', 'sh', '--max-tokens', '10'], {
      cwd: tempDir(),
      env: NO_COORDINATOR,
    });
    expect(shell.code).toBe(2);
    expect(shell.stderr).toContain('are for --adapter codex|claude');
  });

  it('Ctrl-C or SIGTERM stops an agent still waiting for its coordinator, at once', async () => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const running = spawnCliRunning(['agent', '--adapter', 'shell', '--types', 'sh'], {
        cwd: tempDir(),
        env: NO_COORDINATOR,
      });
      await new Promise((r) => setTimeout(r, 1500)); // registering: nothing listens on port 1
      const sent = Date.now();
      running.child.kill(signal);
      const code = await waitForExit(running.child, 8000);
      // It waited up to a minute for the coordinator, deaf to the signal.
      expect(Date.now() - sent).toBeLessThan(5000);
      expect(code).toBe(0);
    }
  });

  it('--wake is for the shell adapter and takes restart, none or a signal name (exit 2 otherwise)', async () => {
    const cases: [string[], string][] = [
      [
        ['--adapter', 'shell', '--types', 'sh', '--wake', 'SIGNOPE'],
        '--wake takes restart, none or a signal name',
      ],
      [
        ['--adapter', 'shell', '--types', 'sh', '--wake', 'KILL'],
        '--wake takes restart, none or a signal name',
      ],
      [['--adapter', 'codex', '--types', 'codex', '--wake', 'restart'], '--wake is for --adapter shell'],
    ];
    for (const [flags, message] of cases) {
      const r = await runCli(['agent', ...flags], { cwd: tempDir(), env: NO_COORDINATOR });
      expect(r.code, `${flags.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(message);
    }
    const help = await runCli(['agent', '--help'], { cwd: tempDir() });
    expect(help.stdout).toContain('--wake <what>');
  });

  it('are the defaults of every task the agent runs; a payload field wins', async () => {
    coord = await startCoordinatorProcess();
    const admin = new Client({ url: coord.url, token: coord.adminToken });
    agent = await startAgentProcess(
      coord,
      ['--adapter', 'fake', '--types', 'fake-a,fake-b', '--bin', FAKE_CLI, '--max-turns', '1'],
      { ROUSE_ADAPTER_TEST_FLAVORS: '1' },
    );
    const twoTurns = (extra: Record<string, unknown>) => ({
      ...extra,
      prompt: `two turns FAKE_SCRIPT:${JSON.stringify({
        steps: [
          { emit: { type: 'turn_started' } },
          { emit: { type: 'turn_completed' } },
          { emit: { type: 'turn_started' } },
          { emit: { type: 'result', ok: true, message: 'two turns done' } },
        ],
      })}`,
    });
    const limited = (await admin.createTask({ type: 'fake-b', maxAttempts: 2, payload: twoTurns({}) })).task;
    const wider = (await admin.createTask({ type: 'fake-a', payload: twoTurns({ maxTurns: 5 }) })).task;
    const done: Task = await waitForTaskEnd(admin, limited.id, { timeoutMs: 20_000 });
    expect(done.status).toBe('failed');
    expect(done.attempt).toBe(1);
    expect(done.error).toMatchObject({
      code: 'resource_runaway',
      retryable: false,
      message: 'budget exceeded: 2 turns spent, maxTurns is 1',
    });
    expect((await waitForTaskEnd(admin, wider.id, { timeoutMs: 20_000 })).status).toBe('completed');
  });
});

describe('rouse agent: the program it runs', () => {
  it('refuses to start (exit 2, before connecting) when the CLI or --bin cannot be run, saying how to point at it', async () => {
    const noCodex = await runCli(['agent', '--adapter', 'codex', '--types', 'codex'], {
      cwd: tempDir(),
      env: { ...NO_COORDINATOR, PATH: '/nonexistent-rouse-path' },
    });
    expect(noCodex.code, noCodex.stderr).toBe(2);
    expect(noCodex.stderr).toContain(
      'error: the codex CLI cannot be run: no "codex" on PATH (/nonexistent-rouse-path); install it, or give its path with --bin /path/to/codex',
    );
    const noClaude = await runCli(
      ['agent', '--adapter', 'claude', '--types', 'claude', '--bin', '/nonexistent/claude'],
      { cwd: tempDir(), env: NO_COORDINATOR },
    );
    expect(noClaude.code, noClaude.stderr).toBe(2);
    expect(noClaude.stderr).toContain(
      'error: the claude CLI cannot be run: /nonexistent/claude does not exist; check --bin',
    );
    // a relative --bin is the CLI's working directory's, and must be executable
    const dir = tempDir();
    writeFileSync(join(dir, 'claude'), '#!/bin/sh\n', { mode: 0o644 });
    const notExec = await runCli(['agent', '--adapter', 'claude', '--types', 'claude', '--bin', './claude'], {
      cwd: dir,
      env: NO_COORDINATOR,
    });
    expect(notExec.code, notExec.stderr).toBe(2);
    expect(notExec.stderr).toContain(`${join(dir, 'claude')} is not executable`);
    const shellBin = await runCli(
      ['agent', '--adapter', 'shell', '--types', 'sh', '--bin', '/nonexistent/tool'],
      { cwd: tempDir(), env: NO_COORDINATOR },
    );
    expect(shellBin.code, shellBin.stderr).toBe(2);
    expect(shellBin.stderr).toContain(
      'error: --bin /nonexistent/tool cannot be run: /nonexistent/tool does not exist',
    );
  });
});

describe('rouse agent token', () => {
  it('a refused token points at --token / ROUSE_AGENT_TOKEN (the enrollment token), exit 1', async () => {
    coord ??= await startCoordinatorProcess();
    const r = await runCli(['agent', '--adapter', 'shell', '--types', 'sh', '--url', coord.url], {
      cwd: tempDir(),
      env: { ROUSE_AGENT_TOKEN: 'rsk_enroll_not-this-one' },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('(unauthorized)');
    expect(r.stderr).toContain('check --token / ROUSE_AGENT_TOKEN (the enrollment token');
    expect(r.stderr).not.toContain('ROUSE_TOKEN (the admin token');
  });
});
