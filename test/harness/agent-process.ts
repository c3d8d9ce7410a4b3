/**
 * A real `rouse agent --adapter …` child process (the built CLI), started against a coordinator and
 * waited for until it registered. `--json` is always on: its events are JSON lines.
 */
import { ROUSE_BIN } from './coordinator-process.js';
import { type Spawned, spawnNode } from './processes.js';
import { tempDir } from './temp-dir.js';

export interface AgentProcess {
  child: Spawned;
  agentId: string;
  workDir: string;
  /** SIGTERM (or another signal) and wait for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export async function startAgentProcess(
  coord: { url: string; agentToken: string },
  args: string[],
  env: Record<string, string> = {},
): Promise<AgentProcess> {
  const workDir = args.includes('--work-dir')
    ? args[args.indexOf('--work-dir') + 1]!
    : tempDir('rouse-agent-');
  const child = spawnNode(
    [
      ROUSE_BIN,
      'agent',
      '--url',
      coord.url,
      '--json',
      ...(args.includes('--work-dir') ? [] : ['--work-dir', workDir]),
      ...args,
    ],
    { ROUSE_AGENT_TOKEN: coord.agentToken, ...env },
  );
  const reg = await child.waitForLine<{ event?: string; agentId?: string }>((m) => m?.event === 'registered');
  return {
    child,
    agentId: reg.agentId!,
    workDir,
    async stop(signal = 'SIGTERM') {
      if (child.proc.exitCode === null && child.proc.signalCode === null) child.kill(signal);
      return child.exited;
    },
  };
}
