/**
 * Commands for agents (`wake`, `cancel`, `checkpoint`, `restart`, `terminate`), each with an id its
 * acknowledgement names (the agent's next heartbeat carries `acks`), kept in the store and
 * delivered on the agent's next heartbeat response (the heartbeat's write takes them:
 * `Store.recordAgentHeartbeats`) — by whichever coordinator that heartbeat reaches,
 * whichever one queued the command. Bounded per agent: an agent that never beats again cannot grow its
 * queue without limit (the oldest commands are dropped), and a command nobody took for a day is
 * dropped when the next one is queued.
 *
 * A supervised agent's (`supervisorId`) `restart`, `terminate` and `wake` are queued on its
 * supervisor's row instead (or as well, for `wake`), naming the child (`agentId`, `agentKey`): the
 * supervisor collects them on its own heartbeat and acknowledges them by the same id.
 */
import { randomBytes } from 'node:crypto';
import type { AgentCommand } from '@rouse/protocol';
import type { Logger } from 'pino';
import type { Store } from '../store/store.js';

export const MAX_QUEUED_COMMANDS_PER_AGENT = 100;

/**
 * Commands a supervisor carries out for its children, and where they go: `restart` and `terminate`
 * to the supervisor only (a hung process cannot collect its own restart), `wake` to both (the SDK's
 * `onWake` in the agent, the wake signal from the supervisor), under one id.
 */
const SUPERVISOR_ROUTES: Partial<Record<AgentCommand['type'], 'supervisor' | 'both'>> = {
  restart: 'supervisor',
  terminate: 'supervisor',
  wake: 'both',
};

/** The agent's supervisor, if it has one that has not left or been ended, and the agent's key. */
async function liveSupervisorOf(
  store: Store,
  agentId: string,
): Promise<{ id: string; childKey: string | undefined } | null> {
  const agent = await store.getAgent(agentId);
  if (agent === null || agent.supervisorId === null) return null;
  const supervisor = await store.getAgent(agent.supervisorId);
  if (supervisor === null || supervisor.status === 'left' || supervisor.status === 'terminated') return null;
  return { id: supervisor.id, childKey: agent.key ?? undefined };
}

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
  const queue = (agentId: string, command: AgentCommand) =>
    store.queueAgentCommand({
      agentId,
      command,
      keep: MAX_QUEUED_COMMANDS_PER_AGENT,
      maxAgeMs: MAX_COMMAND_AGE_MS,
    });
  const enqueue = async (agentId: string, command: AgentCommand): Promise<IdentifiedCommand> => {
    const identified = { ...command, id: `cmd_${randomBytes(12).toString('hex')}` };
    const route = SUPERVISOR_ROUTES[command.type];
    const supervisor = route === undefined ? null : await liveSupervisorOf(store, agentId);
    if (supervisor === null || route === undefined) {
      await queue(agentId, identified);
      return identified;
    }
    await queue(supervisor.id, { ...identified, agentId, agentKey: supervisor.childKey });
    if (route === 'both') await queue(agentId, identified);
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
