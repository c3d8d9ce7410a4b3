/**
 * Commands for agents (`wake`, `cancel`, `checkpoint`, `restart`, `terminate`), each with an id its
 * acknowledgement names (in the agent's next heartbeat's `acks`, or at once on `commands/acks`), kept
 * in the store and delivered on the agent's next heartbeat response (the heartbeat's write takes them:
 * `Store.recordAgentHeartbeats`) — by whichever coordinator that heartbeat reaches,
 * whichever one queued the command. Bounded per agent: an agent that never beats again cannot grow its
 * queue without limit (the oldest commands are dropped), and a command nobody took for a day is
 * dropped when the next one is queued.
 *
 * A supervised agent's (`supervisorId`) `restart`, `terminate` and `wake` are queued on its
 * supervisor's row instead (or as well, for `wake`), naming the child (`agentId`, `agentKey`): the
 * supervisor collects them on its own heartbeat and acknowledges them by the same id.
 *
 * An agent that must get its commands at once — a supervisor, which carries out restarts and kills for
 * its children — also waits for them (`next`, a long-poll): a command queued through this coordinator
 * wakes it at once, one queued through another is seen within `pollMs`.
 */
import { randomBytes } from 'node:crypto';
import type { Agent, AgentCommand } from '@rouse/protocol';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
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

/**
 * The agent's supervisor, if it has one that has not left or been ended, and the agent's key. `known`
 * is the agent as its caller has just read it.
 */
async function liveSupervisorOf(
  store: Store,
  agentId: string,
  known: Agent | undefined,
): Promise<{ id: string; childKey: string | undefined } | null> {
  const agent = known?.id === agentId ? known : await store.getAgent(agentId);
  if (agent === null || agent.supervisorId === null) return null;
  const supervisor = await store.getAgent(agent.supervisorId);
  if (supervisor === null || supervisor.status === 'left' || supervisor.status === 'terminated') return null;
  return { id: supervisor.id, childKey: agent.key ?? undefined };
}

/**
 * A new command id. Whoever records what a command is for (an intervention) does so under this id
 * before queueing it: its acknowledgement can come back within milliseconds (a supervisor's long-poll).
 */
export function newCommandId(): string {
  return `cmd_${randomBytes(12).toString('hex')}`;
}

/** A command with the id it is delivered with. */
export type IdentifiedCommand = AgentCommand & { id: string };
/** A command nobody took for this long is dropped (its agent is gone). */
export const MAX_COMMAND_AGE_MS = 24 * 60 * 60 * 1000;

export interface AgentCommands {
  /**
   * Queue a command (under its `id` if it has one, else a new one); resolves with it as delivered (its
   * `id` is what the agent's acknowledgement names). `agent`: the agent as the caller has just read
   * it (its supervisor is then not looked up through a second read).
   */
  enqueue(agentId: string, command: AgentCommand, agent?: Agent): Promise<IdentifiedCommand>;
  /**
   * Queue without waiting (from code that cannot await, such as a transition's side effects); a
   * failure is logged. `idle()` waits for these.
   */
  enqueueLater(agentId: string, command: AgentCommand): void;
  clear(agentId: string): Promise<void>;
  /**
   * Take the agent's queued commands; when there are none, wait up to `waitMs` for one (resolving
   * early, empty, when `signal` aborts).
   */
  next(agentId: string, waitMs: number, signal?: AbortSignal): Promise<AgentCommand[]>;
  /** Long-polls waiting here now. */
  readonly waiting: number;
  /** Resolves when no `enqueueLater` write is in flight. */
  idle(): Promise<void>;
}

export function createAgentCommands(deps: {
  store: Store;
  clock: Clock;
  logger: Logger;
  /** How often a long-poll looks at the store for commands queued through other coordinators. */
  pollMs: number;
}): AgentCommands {
  const { store, clock, logger } = deps;
  const pending = new Set<Promise<void>>();
  /** Long-polls waiting here, by agent: each is woken when a command for it is queued here. */
  const waiters = new Map<string, Set<() => void>>();
  let waiting = 0;
  const queue = async (agentId: string, command: AgentCommand): Promise<void> => {
    await store.queueAgentCommand({
      agentId,
      command,
      keep: MAX_QUEUED_COMMANDS_PER_AGENT,
      maxAgeMs: MAX_COMMAND_AGE_MS,
    });
    for (const wake of waiters.get(agentId) ?? []) wake();
  };
  const enqueue = async (
    agentId: string,
    command: AgentCommand,
    agent?: Agent,
  ): Promise<IdentifiedCommand> => {
    const identified = { ...command, id: command.id ?? newCommandId() };
    const route = SUPERVISOR_ROUTES[command.type];
    const supervisor = route === undefined ? null : await liveSupervisorOf(store, agentId, agent);
    if (supervisor === null || route === undefined) {
      await queue(agentId, identified);
      return identified;
    }
    // A wake goes to both at once: the two queues are independent.
    await Promise.all([
      queue(supervisor.id, { ...identified, agentId, agentKey: supervisor.childKey }),
      ...(route === 'both' ? [queue(agentId, identified)] : []),
    ]);
    return identified;
  };

  /** Resolves at the first of: a command queued here for the agent, `ms` passed, `signal` aborted. */
  function nap(agentId: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let set = waiters.get(agentId);
      if (set === undefined) {
        set = new Set();
        waiters.set(agentId, set);
      }
      const own = set;
      const done = (): void => {
        timer.cancel();
        signal?.removeEventListener('abort', done);
        own.delete(done);
        if (own.size === 0 && waiters.get(agentId) === own) waiters.delete(agentId);
        resolve();
      };
      const timer = clock.setTimer(ms, done);
      own.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  return {
    enqueue,
    async next(agentId, waitMs, signal) {
      const deadline = clock.now() + waitMs;
      waiting++;
      try {
        for (;;) {
          const taken = await store.takeAgentCommands(agentId);
          const left = deadline - clock.now();
          if (taken.length > 0 || left <= 0 || signal?.aborted) return taken;
          await nap(agentId, Math.min(left, deps.pollMs), signal);
        }
      } finally {
        waiting--;
      }
    },
    get waiting() {
      return waiting;
    },
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
