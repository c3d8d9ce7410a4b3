/**
 * Commands for agents (`wake`, `cancel`, `checkpoint`, `restart`, `terminate`), queued in memory and
 * delivered on the agent's next heartbeat response. Bounded per agent: an agent that never beats
 * again cannot grow the queue without limit (the oldest command is dropped).
 */
import type { AgentCommand } from '@rouse/protocol';

export const MAX_QUEUED_COMMANDS_PER_AGENT = 100;

export interface AgentCommands {
  enqueue(agentId: string, command: AgentCommand): void;
  /** Take every queued command of the agent. */
  drain(agentId: string): AgentCommand[];
  has(agentId: string, type: AgentCommand['type'], taskId?: string): boolean;
  clear(agentId: string): void;
}

export function createAgentCommands(): AgentCommands {
  const queues = new Map<string, AgentCommand[]>();
  const has = (agentId: string, type: AgentCommand['type'], taskId?: string): boolean =>
    queues.get(agentId)?.some((c) => c.type === type && c.taskId === taskId) ?? false;
  return {
    enqueue(agentId, command) {
      if (command.taskId !== undefined && has(agentId, command.type, command.taskId)) return;
      let q = queues.get(agentId);
      if (q === undefined) {
        q = [];
        queues.set(agentId, q);
      }
      q.push(command);
      if (q.length > MAX_QUEUED_COMMANDS_PER_AGENT) q.shift();
    },
    drain(agentId) {
      const q = queues.get(agentId);
      if (q === undefined) return [];
      queues.delete(agentId);
      return q;
    },
    has,
    clear(agentId) {
      queues.delete(agentId);
    },
  };
}
