/**
 * Interventions (docs/design.md §6.4): what is done to an agent to recover it, recorded with its
 * evidence and who acted, and published as `intervention` events. The recovery ladder
 * (`ladder.ts`) opens its own; a person's commands (`wake`, `restart`, `terminate` through the admin
 * route or `rouse wake|restart|terminate`) open a manual one, which the agent's acknowledgement of the
 * command ends (`done` → succeeded, `failed` → failed, `unsupported` → skipped); a newer manual
 * command supersedes an open one. An acknowledgement of a ladder's command is recorded in its
 * evidence (`<command>Ack`) for the ladder to judge.
 */
import type {
  AgentCommand,
  CommandAck,
  Intervention,
  InterventionAction,
  InterventionsResponse,
  JsonObject,
} from '@rouse/protocol';
import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.js';
import type { InterventionQuery, Store } from '../../store/store.js';
import type { EventBus } from '../event-bus.js';
import type { EventRelay } from '../event-relay.js';
import { newId } from '../ids.js';
import { BACKGROUND_STORE_CALLS, forEachLimited } from '../limited.js';

/** What a person's command does, as an intervention's action (other commands open none). */
const MANUAL_ACTIONS: Partial<Record<AgentCommand['type'], InterventionAction>> = {
  wake: 'wake',
  restart: 'snapshot_and_restart',
  terminate: 'terminate',
};

const ACK_STATES = { done: 'succeeded', failed: 'failed', unsupported: 'skipped' } as const;

/** The command an open intervention of the ladder sent last, by its action (and step). */
export function ladderCommandOf(i: Intervention): AgentCommand['type'] {
  switch (i.action) {
    case 'snapshot_and_restart':
      return i.evidence.phase === 'checkpoint' ? 'checkpoint' : 'restart';
    case 'terminate':
      return 'terminate';
    default:
      return 'wake';
  }
}

/**
 * Where an answer to a ladder's command is recorded: `<command>Ack` — except a supervisor's answer to
 * a `wake` (it sent the signal; the agent answers the wake itself), which is `signalAck`.
 */
function ackKey(i: Intervention, by: 'agent' | 'supervisor'): string {
  const command = ladderCommandOf(i);
  return by === 'supervisor' && command === 'wake' ? 'signalAck' : `${command}Ack`;
}

export interface Interventions {
  /** Publish a change (an `intervention` event) made by whoever wrote it. */
  publish(intervention: Intervention): void;
  /**
   * A person sent `command` (with its id) to the agent: record it as a manual intervention, ending
   * an open manual one as superseded. Commands that are no intervention (`cancel`, `checkpoint`) → null.
   */
  recordManual(input: {
    agentId: string;
    incarnation: number;
    command: AgentCommand & { id: string };
    evidence: JsonObject;
  }): Promise<Intervention | null>;
  /**
   * The agent — or, for commands routed to it, the agent's supervisor — answered commands: end the
   * manual interventions they belong to, record the answers in the ladder's (with the output, the
   * process's last log lines, a supervisor sends). Resolves with how many answered a command of an
   * open intervention, and the agents whose ladder has news.
   */
  acknowledge(agentId: string, acks: readonly CommandAck[]): Promise<{ recorded: number; news: string[] }>;
  /**
   * The agent left or was ended: its open interventions end — a `terminate` succeeded (the agent is
   * gone), anything else is skipped (nobody left to act on).
   */
  agentEnded(agentId: string, reason: string): Promise<void>;
  list(query: InterventionQuery): Promise<InterventionsResponse>;
  get(id: string): Promise<Intervention | null>;
}

export function createInterventions(deps: {
  store: Store;
  clock: Clock;
  bus: EventBus;
  eventRelay: Pick<EventRelay, 'relayIntervention'>;
  logger: Logger;
}): Interventions {
  const { store, clock, bus, logger } = deps;
  const publish = (intervention: Intervention): void => {
    deps.eventRelay.relayIntervention(intervention.id);
    if (bus.active) bus.publish({ type: 'intervention', at: clock.now(), intervention });
  };

  return {
    publish,
    async recordManual({ agentId, incarnation, command, evidence }) {
      const action = MANUAL_ACTIONS[command.type];
      if (action === undefined) return null;
      const open = await store.listInterventions({ agentId, states: ['pending', 'held'] });
      for (const prior of open.interventions) {
        if (prior.condition !== 'manual') continue;
        const ended = await store.endIntervention({
          id: prior.id,
          state: 'skipped',
          reason: `superseded by a newer manual ${command.type} (command ${command.id})`,
        });
        if (ended) publish(ended);
      }
      const opened = await store.openIntervention({
        id: newId('itv', clock.now()),
        agentId,
        incarnation,
        taskId: command.taskId ?? null,
        condition: 'manual',
        action,
        rung: null,
        attempt: 1,
        reason: command.reason ?? `${command.type} sent by a person`,
        evidence,
        actor: 'admin',
        commandId: command.id,
        coordinatorId: null,
        shardEpoch: null,
      });
      if (opened) publish(opened);
      return opened;
    },

    async acknowledge(agentId, acks) {
      const news = new Set<string>();
      let recorded = 0;
      // A supervisor's heartbeat can carry a burst of acknowledgements (a stall that hit many of its
      // children at once): recorded a few at a time, not one round trip after another. Each names its
      // own command, and each write below is one atomic statement, so their order does not matter.
      await forEachLimited(acks, BACKGROUND_STORE_CALLS, async (ack) => {
        const [found] = (await store.listInterventions({ commandId: ack.commandId, limit: 1 })).interventions;
        // The agent itself answers, or its supervisor (which carries out restart, terminate and signals).
        const by =
          found === undefined
            ? null
            : found.agentId === agentId
              ? 'agent'
              : (await store.getAgent(found.agentId))?.supervisorId === agentId
                ? 'supervisor'
                : null;
        if (found === undefined || by === null) {
          logger.debug({ agentId, ack }, 'acknowledgement of a command no open intervention sent');
          return;
        }
        const answer = {
          outcome: ack.outcome,
          message: ack.message ?? null,
          at: clock.now(),
          by,
          from: agentId,
        };
        // The last lines the process wrote (a supervisor's ack of a terminate or restart).
        const output: JsonObject = ack.output !== undefined ? { output: ack.output } : {};
        if (found.condition !== 'manual') {
          const noted = await store.noteIntervention({
            id: found.id,
            evidence: { [ackKey(found, by)]: answer, ...output },
          });
          if (noted) {
            recorded++;
            publish(noted);
            news.add(found.agentId);
          }
          return;
        }
        const ended = await store.endIntervention({
          id: found.id,
          state: ACK_STATES[ack.outcome],
          reason: ack.message ?? `the ${by} answered ${ack.outcome}`,
          evidence: { ack: answer, ...output },
        });
        if (ended) {
          recorded++;
          publish(ended);
        }
      });
      return { recorded, news: [...news] };
    },

    async agentEnded(agentId, reason) {
      const open = await store.listInterventions({ agentId, states: ['pending', 'held'] });
      for (const it of open.interventions) {
        const ended = await store.endIntervention({
          id: it.id,
          state: it.action === 'terminate' ? 'succeeded' : 'skipped',
          reason,
        });
        if (ended) publish(ended);
      }
    },

    list: (query) => store.listInterventions(query),
    get: (id) => store.getIntervention(id),
  };
}
