/**
 * Interventions (docs/design.md §6.4): what is done to an agent to recover it, recorded with its
 * evidence and who acted, and published as `intervention` events. For now a person's commands
 * (`wake`, `restart`, `terminate` through the admin route or `rouse wake|restart|terminate`) open a
 * manual intervention; the agent's acknowledgement of the command ends it (`done` → succeeded,
 * `failed` → failed, `unsupported` → skipped). A newer manual command supersedes an open one.
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
import { newId } from '../ids.js';

/** What a person's command does, as an intervention's action (other commands open none). */
const MANUAL_ACTIONS: Partial<Record<AgentCommand['type'], InterventionAction>> = {
  wake: 'wake',
  restart: 'snapshot_and_restart',
  terminate: 'terminate',
};

const ACK_STATES = { done: 'succeeded', failed: 'failed', unsupported: 'skipped' } as const;

export interface Interventions {
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
   * manual interventions they belong to, with the answer's output (last log lines) in the evidence.
   */
  acknowledge(agentId: string, acks: readonly CommandAck[]): Promise<void>;
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
  logger: Logger;
}): Interventions {
  const { store, clock, bus, logger } = deps;
  const publish = (intervention: Intervention): void => {
    if (bus.active) bus.publish({ type: 'intervention', at: clock.now(), intervention });
  };

  return {
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
      for (const ack of acks) {
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
        if (found === undefined || by === null || found.condition !== 'manual') {
          logger.debug({ agentId, ack }, 'acknowledgement of a command no open manual intervention sent');
          continue;
        }
        const ended = await store.endIntervention({
          id: found.id,
          state: ACK_STATES[ack.outcome],
          reason: ack.message ?? `the ${by} answered ${ack.outcome}`,
          evidence: {
            ack: { outcome: ack.outcome, message: ack.message ?? null, at: clock.now(), by, from: agentId },
            // The last lines the process wrote (a supervisor's ack of a terminate or restart).
            ...(ack.output !== undefined ? { output: ack.output } : {}),
          },
        });
        if (ended) publish(ended);
      }
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
