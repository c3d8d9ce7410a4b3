/** What both stores' `recordAgentHeartbeats` share: how a batch's results are handed out. */
import type { AgentCommand } from '@rouse/protocol';
import type { AgentHeartbeatInput } from './store.js';

/**
 * The results of a batch of agent heartbeats, in input order: null for an input that found no agent
 * active in its incarnation (`found[i]` false); for one that did, its agent's taken commands with the
 * first such input naming it and none with any later one. An input of a replaced incarnation thus
 * never takes the commands its successor's beat in the same batch gets.
 */
export function handOutCommands(
  inputs: readonly AgentHeartbeatInput[],
  found: readonly boolean[],
  commandsOf: (agentId: string) => AgentCommand[],
): (AgentCommand[] | null)[] {
  const given = new Set<string>();
  return inputs.map(({ agentId }, i) => {
    if (!found[i]) return null;
    if (given.has(agentId)) return [];
    given.add(agentId);
    return commandsOf(agentId);
  });
}
