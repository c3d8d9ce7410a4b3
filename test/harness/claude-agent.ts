/**
 * A Claude Code agent for the adapter tests: a real agent process running the Claude adapter with
 * the pinned `claude` (test/harness/agent-clis.ts), pointed at a fake Messages API, with a data
 * directory (and so a CLI home) of its own.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { agentCliBin } from './agent-clis.js';
import type { CoordinatorProcess } from './coordinator-process.js';
import type { FakeAnthropic } from './fake-anthropic.js';
import { type Spawned, spawnNode } from './processes.js';
import { tempDir } from './temp-dir.js';
import { waitFor } from './wait.js';

const AGENT = fileURLToPath(new URL('../fixtures/claude-agent.mjs', import.meta.url));

export interface ClaudeAgentOptions {
  agentType: string;
  concurrency?: number;
  /** @default a fresh temp dir */
  dataDir?: string;
  /** Passed to `claude` as they are. */
  cliArgs?: string[];
}

export interface ClaudeAgent {
  child: Spawned;
  dataDir: string;
  agentId(): Promise<string>;
  /** The pid of the `claude` running task `taskId` (found by its session id in the command line). */
  cliPid(taskId: string, admin: { getTask(id: string): Promise<{ session: unknown }> }): Promise<number>;
  /** Resolves with the time the agent saw the cancel of `taskId`. */
  cancelSeen(taskId: string): Promise<number>;
  /** SIGTERM (a clean stop) or SIGKILL, and wait for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export async function startClaudeAgent(
  coord: Pick<CoordinatorProcess, 'url' | 'agentToken'>,
  fake: Pick<FakeAnthropic, 'url'>,
  options: ClaudeAgentOptions,
): Promise<ClaudeAgent> {
  const dataDir = options.dataDir ?? tempDir('rouse-claude-agent-');
  const child = spawnNode([AGENT], {
    ROUSE_URL: coord.url,
    ROUSE_AGENT_TOKEN: coord.agentToken,
    AGENT_TYPE: options.agentType,
    CONCURRENCY: String(options.concurrency ?? 1),
    DATA_DIR: dataDir,
    SPOOL_DIR: tempDir('rouse-spool-'),
    CLAUDE_BIN: agentCliBin('claude'),
    CLI_ARGS: JSON.stringify(options.cliArgs ?? []),
    CLI_ENV: JSON.stringify({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'sk-ant-fake' }),
  });
  const started = child.waitForLine<{ event: string; agentId: string }>((m) => m.event === 'started', 30_000);
  await started;
  return {
    child,
    dataDir,
    agentId: async () => (await started).agentId,
    cliPid: async (taskId, admin) => {
      const sessionId = await waitFor(
        async () => ((await admin.getTask(taskId)).session as { sessionId?: string } | null)?.sessionId,
        { what: `the session of ${taskId}`, timeoutMs: 30_000, intervalMs: 50 },
      );
      return waitFor(() => pidsWithArg(sessionId)[0], {
        what: `the claude process of session ${sessionId}`,
        timeoutMs: 10_000,
        intervalMs: 50,
      });
    },
    cancelSeen: async (taskId) => {
      await child.waitForLine<{ event: string; taskId: string }>(
        (m) => m.event === 'cancelled' && m.taskId === taskId,
        30_000,
      );
      return Date.now();
    },
    stop: async (signal = 'SIGTERM') => {
      if (child.proc.exitCode === null && child.proc.signalCode === null) child.kill(signal);
      await child.exited;
    },
  };
}

/** Live processes with `arg` as one of their command-line arguments. */
export function pidsWithArg(arg: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const args = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (args.includes(arg)) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}
