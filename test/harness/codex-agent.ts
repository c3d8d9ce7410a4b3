/**
 * A real `rouse agent --adapter codex` process running the pinned Codex CLI against a fake Responses
 * API, and what a test needs around it: the processes left in its working directories (a SIGKILLed
 * adapter leaves its CLI's process group behind), found through /proc and killed by pid.
 */
import { chmodSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentCliBin } from './agent-clis.js';
import { type CoordinatorProcess, ROUSE_BIN } from './coordinator-process.js';
import type { FakeOpenAI } from './fake-openai.js';
import { type Spawned, spawnNode } from './processes.js';
import { tempDir } from './temp-dir.js';

export interface CodexAgent extends Spawned {
  /** The agent's data directory (homes, work directories). */
  dataDir: string;
}

export interface CodexAgentOptions {
  /** The task types it serves. @default ['codex'] */
  types?: string[];
  /** The executable to run instead of the pinned CLI (a wrapper around it). */
  bin?: string;
  extraArgs?: string[];
  env?: Record<string, string>;
}

export function startCodexAgent(
  coord: Pick<CoordinatorProcess, 'url' | 'agentToken'>,
  fake: Pick<FakeOpenAI, 'baseUrl'>,
  options: CodexAgentOptions = {},
): CodexAgent {
  const dataDir = tempDir('rouse-codex-agent-');
  const child = spawnNode(
    [
      ROUSE_BIN,
      'agent',
      '--adapter',
      'codex',
      '--url',
      coord.url,
      '--types',
      (options.types ?? ['codex']).join(','),
      '--bin',
      options.bin ?? agentCliBin('codex'),
      '--work-dir',
      dataDir,
      '--cli-env',
      `OPENAI_BASE_URL=${fake.baseUrl}`,
      '--cli-env',
      'OPENAI_API_KEY=sk-fake',
      // Not the machine's own dotfiles: Codex runs commands in a login shell.
      '--cli-env',
      `HOME=${tempDir('rouse-codex-user-home-')}`,
      ...(options.extraArgs ?? []),
    ],
    { ROUSE_AGENT_TOKEN: coord.agentToken, ...options.env },
  );
  return { ...child, dataDir };
}

/**
 * A wrapper around the pinned CLI that runs it, then hangs (`sleep`) instead of exiting: a CLI that
 * printed its result and does not exit.
 */
export function hangAfterResultBin(): string {
  const file = join(tempDir('rouse-codex-wrapper-'), 'codex-then-hang');
  writeFileSync(file, `#!/bin/sh\n"${agentCliBin('codex')}" "$@"\nsleep 300\n`);
  chmodSync(file, 0o755);
  return file;
}

/** The processes whose working directory is under `dir` (Linux /proc): pid and command line. */
export function processesIn(dir: string): { pid: number; cmd: string }[] {
  const found: { pid: number; cmd: string }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cwd = readlinkSync(`/proc/${name}/cwd`);
      if (cwd !== dir && !cwd.startsWith(`${dir}/`)) continue;
      const ppid = readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]?.split(' ')[1];
      const cmd = `[ppid ${ppid}] ${readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim()}`;
      found.push({ pid: Number(name), cmd });
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/** SIGKILL what runs in `dir` (by pid); returns how many there were. */
export function killProcessesIn(dir: string): number {
  const pids = processesIn(dir).map((p) => p.pid);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  return pids.length;
}
