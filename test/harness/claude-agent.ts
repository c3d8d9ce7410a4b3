/**
 * A Claude Code agent for the adapter tests: a real agent process running the Claude adapter with
 * the pinned `claude` (test/harness/agent-clis.ts), pointed at a fake Messages API, with a data
 * directory (and so a CLI home) of its own.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { agentCliBin } from './agent-clis.js';
import { type AgentProcess, startAgentProcess } from './agent-process.js';
import type { CoordinatorProcess } from './coordinator-process.js';
import type { FakeAnthropic } from './fake-anthropic.js';
import { waitFor } from './wait.js';

export interface ClaudeAgentOptions {
  agentType: string;
  concurrency?: number;
  /** Passed to `claude` as they are (`--cli-arg`). */
  cliArgs?: string[];
}

export interface ClaudeAgent extends AgentProcess {
  /** The pid of the `claude` running task `taskId` (found by its session id in the command line). */
  cliPid(taskId: string, admin: { getTask(id: string): Promise<{ session: unknown }> }): Promise<number>;
  /** Resolves with the time the agent saw the cancel of `taskId`. */
  cancelSeen(taskId: string): Promise<number>;
}

/**
 * `rouse agent --adapter claude --types claude --bin <pinned claude>` with the fake's URL and a
 * dummy key as `--cli-env`, its own work dir (so its own CLI home).
 */
export async function startClaudeAgent(
  coord: Pick<CoordinatorProcess, 'url' | 'agentToken'>,
  fake: Pick<FakeAnthropic, 'url'>,
  options: ClaudeAgentOptions,
): Promise<ClaudeAgent> {
  const agent = await startAgentProcess(coord, [
    '--adapter',
    'claude',
    '--types',
    'claude',
    '--agent-type',
    options.agentType,
    '--concurrency',
    String(options.concurrency ?? 1),
    '--bin',
    agentCliBin('claude'),
    '--cli-env',
    `ANTHROPIC_BASE_URL=${fake.url}`,
    '--cli-env',
    'ANTHROPIC_API_KEY=sk-ant-fake',
    ...(options.cliArgs ?? []).flatMap((a) => ['--cli-arg', a]),
  ]);
  return {
    ...agent,
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
      await agent.child.waitForLine<{ event: string; taskId: string }>(
        (m) => m?.event === 'cancelled' && m.taskId === taskId,
        30_000,
      );
      return Date.now();
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
