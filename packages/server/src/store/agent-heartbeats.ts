/** What both stores' `recordAgentHeartbeats` share: how a batch's results are handed out. */
import type { AgentCommand } from '@rouse/protocol';
import type { AgentHeartbeatInput } from './store.js';

/**
 * The results of a batch of agent heartbeats, in input order: null for an agent that was not found;
 * for one that was, its taken commands with the first input naming it and none with any later one.
 */
export function handOutCommands(
  inputs: readonly AgentHeartbeatInput[],
  found: ReadonlySet<string>,
  commandsOf: (agentId: string) => AgentCommand[],
): (AgentCommand[] | null)[] {
  const given = new Set<string>();
  return inputs.map(({ agentId }) => {
    if (!found.has(agentId)) return null;
    if (given.has(agentId)) return [];
    given.add(agentId);
    return commandsOf(agentId);
  });
}
