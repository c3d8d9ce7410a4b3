/**
 * The pinned coding-agent CLIs for the tests (installed by agent-clis.mjs, which `npm run bench`
 * loads too): where each one's executable is. A test that needs a CLI which is not there fails
 * (never skips), naming the cause.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AGENT_CLI_PACKAGES, agentCliDir, ensureAgentClis } from './agent-clis.mjs';

export { AGENT_CLI_PACKAGES, agentCliDir, ensureAgentClis };

export type AgentCli = keyof typeof AGENT_CLI_PACKAGES;

/** The path of a pinned CLI's executable; throws, naming the fix, when it is not installed. */
export function agentCliBin(cli: AgentCli, env: NodeJS.ProcessEnv = process.env): string {
  const bin = join(agentCliDir(env), 'node_modules', '.bin', AGENT_CLI_PACKAGES[cli].bin);
  if (!existsSync(bin)) {
    throw new Error(
      `${AGENT_CLI_PACKAGES[cli].name}@${AGENT_CLI_PACKAGES[cli].version} is not installed at ${bin}; ` +
        'the test run installs it first (test/harness/agent-clis-global-setup.ts) — was npm unreachable?',
    );
  }
  return bin;
}
