/**
 * Commands for agents (`wake`, `cancel`, `checkpoint`, `restart`, `terminate`), each with an id its
 * acknowledgement names (the agent's next heartbeat carries `acks`), kept in the store and
 * delivered on the agent's next heartbeat response (the heartbeat's write takes them:
 * `Store.recordAgentHeartbeats`) — by whichever coordinator that heartbeat reaches,
 * whichever one queued the command. Bounded per agent: an agent that never beats again cannot grow its
 * queue without limit (the oldest commands are dropped), and a command nobody took for a day is
 * dropped when the next one is queued.
 */
import { randomBytes } from 'node:crypto';
import type { AgentCommand } from '@rouse/protocol';
import type { Logger } from 'pino';
import type { Store } from '../store/store.js';

export const MAX_QUEUED_COMMANDS_PER_AGENT = 100;

/** A command with the id it is delivered with. */
export type IdentifiedCommand = AgentCommand & { id: string };
/** A command nobody took for this long is dropped (its agent is gone). */
export const MAX_COMMAND_AGE_MS = 24 * 60 * 60 * 1000;

export interface AgentCommands {
  /** Queue a command; resolves with it as delivered (its `id` is what the agent's acknowledgement names). */
  enqueue(agentId: string, command: AgentCommand): Promise<IdentifiedCommand>;
  /**
   * Queue without waiting (from code that cannot await, such as a transition's side effects); a
   * failure is logged. `idle()` waits for these.
   */
  enqueueLater(agentId: string, command: AgentCommand): void;
  clear(agentId: string): Promise<void>;
  /** Resolves when no `enqueueLater` write is in flight. */
  idle(): Promise<void>;
}

export function createAgentCommands(store: Store, logger: Logger): AgentCommands {
  const pending = new Set<Promise<void>>();
  const enqueue = async (agentId: string, command: AgentCommand): Promise<IdentifiedCommand> => {
    const identified = { ...command, id: `cmd_${randomBytes(12).toString('hex')}` };
    await store.queueAgentCommand({
      agentId,
      command: identified,
      keep: MAX_QUEUED_COMMANDS_PER_AGENT,
      maxAgeMs: MAX_COMMAND_AGE_MS,
    });
    return identified;
  };
  return {
    enqueue,
    enqueueLater(agentId, command) {
      const p: Promise<void> = enqueue(agentId, command)
        .then(() => undefined)
        .catch((err: unknown) => {
          logger.warn(
            { err, agentId, command: command.type, taskId: command.taskId },
            'could not queue a command',
          );
        })
        .finally(() => pending.delete(p));
      pending.add(p);
    },
    clear: (agentId) => store.clearAgentCommands(agentId),
    async idle() {
      while (pending.size > 0) await Promise.all(pending);
    },
  };
}
