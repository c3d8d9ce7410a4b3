/**
 * Agents (docs/protocol.md "Agents", "The watchdog"): registration (a new slot, or the next incarnation of
 * a keyed one, whose predecessor's tasks time out at once), the agent heartbeat (its tasks' beats in
 * one batch, dependency reports, the watchdog's detectors, commands back), graceful leave, reads,
 * diagnosis and operator commands.
 */
import type {
  Agent,
  AgentCommand,
  AgentDiagnosis,
  AgentHeartbeatRequest,
  AgentHeartbeatResponse,
  AgentSnapshot,
  CommandAck,
  CommandAcksRequest,
  CommandAcksResponse,
  NextCommandsRequest,
  NextCommandsResponse,
  RegisterAgentRequest,
  RegisterAgentResponse,
} from '@rouse/protocol';
import { NotFoundError, RouseError } from '../core/errors.js';
import { diagnoseAgent } from '../core/watchdog/agent-diagnosis.js';
import type { AgentQuery, AgentWatch } from '../store/store.js';
import { newCommandId } from './agent-commands.js';
import { newAgentToken, requireActsAs, requireAdmin, requireEnrollment, requireRead } from './auth.js';
import type { Caller, SentCommand } from './coordinator.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { newId } from './ids.js';
import { BACKGROUND_STORE_CALLS, forEachLimited } from './limited.js';
import { createSupervision } from './supervision.js';
import { recordBeats } from './task-heartbeats.js';
import { heartbeatInput } from './watchdog/heartbeat-input.js';

export interface AgentOperations {
  registerAgent(caller: Caller, req: RegisterAgentRequest): Promise<RegisterAgentResponse>;
  agentHeartbeat(
    caller: Caller,
    agentId: string,
    req: AgentHeartbeatRequest,
  ): Promise<AgentHeartbeatResponse>;
  leave(caller: Caller, agentId: string): Promise<void>;
  getAgent(caller: Caller, agentId: string): Promise<Agent>;
  listAgents(caller: Caller, query?: AgentQuery): Promise<{ agents: Agent[]; nextCursor: string | null }>;
  diagnoseAgent(caller: Caller, agentId: string): Promise<AgentDiagnosis>;
  sendCommand(caller: Caller, agentId: string, command: AgentCommand): Promise<SentCommand>;
  nextCommands(
    caller: Caller,
    agentId: string,
    req: NextCommandsRequest,
    signal?: AbortSignal,
  ): Promise<NextCommandsResponse>;
  /** The agent (or a supervisor) answers commands it took, at once rather than with its next heartbeat. */
  acknowledgeCommands(caller: Caller, agentId: string, req: CommandAcksRequest): Promise<CommandAcksResponse>;
  /**
   * The agent's process is gone for good (it left, or the watchdog terminated it): its tasks go back
   * to the queue, its conditions close, its commands are dropped, its interventions end.
   */
  endAgent(
    agentId: string,
    lifecycle: 'left' | 'terminated',
    reason: string,
    options?: { keepInterventions?: boolean },
  ): Promise<void>;
}

/** What this coordinator keeps of agents outside the context (claims, tokens, timers, statuses). */
export interface AgentHooks {
  /** Forget what it keeps of the agent. */
  forget(agentId: string, how: 'left' | 'lost' | 'replaced'): void;
  /** The store accepted a heartbeat of this incarnation: it is active. */
  confirmed(agentId: string, incarnation: number): void;
}

export function createAgentOperations(ctx: CoordinatorContext, hooks: AgentHooks): AgentOperations {
  const { store, clock, bus, watchdog } = ctx;
  const supervision = createSupervision(ctx);

  /**
   * The agent with the name of the policy that applies to it now: the store keeps the one in force
   * when it registered, and a reload of the policy file may have changed which one applies.
   */
  const current = (agent: Agent): Agent => {
    const policy = ctx.policies.current().forAgentType(agent.agentType).name;
    return policy === agent.policy ? agent : { ...agent, policy };
  };

  /**
   * What the previous incarnation of a keyed slot saved (an agent without a key is new: it has none).
   * A snapshot that cannot be read (its blob is gone) does not stop the registration: it is logged.
   */
  async function slotSnapshot(agent: Agent): Promise<AgentSnapshot | null> {
    if (agent.key === null) return null;
    try {
      return await ctx.snapshots.latest(agent.id);
    } catch (err) {
      ctx.logger.warn({ err, agentId: agent.id }, 'could not read the snapshot of a registering agent');
      return null;
    }
  }

  async function mustGetAgent(agentId: string): Promise<Agent> {
    const agent = await store.getAgent(agentId);
    if (agent === null) throw new NotFoundError('agent', agentId);
    return current(agent);
  }

  /** Record answers to commands (from a heartbeat or on their own call); the ladders with news look again. */
  async function recordAnswers(agentId: string, acks: readonly CommandAck[]): Promise<number> {
    const { recorded, news } = await ctx.interventions.acknowledge(agentId, acks);
    for (const id of news) watchdog.ladder.poke(id);
    return recorded;
  }

  return {
    async registerAgent(caller, req) {
      requireEnrollment(caller);
      const id = newId('agt', clock.now());
      const { token, tokenHash } = newAgentToken();
      const policy = ctx.policies.current().forAgentType(req.agentType);
      const requires = [...new Set([...(req.requires ?? []), ...policy.dependencies])];
      const reg = await store.registerAgent({
        id,
        key: req.key ?? null,
        agentType: req.agentType,
        name: req.name ?? `${req.agentType}-${id.slice(-6).toLowerCase()}`,
        host: req.host ?? null,
        pid: req.pid ?? null,
        taskTypes: req.taskTypes ?? [],
        labels: req.labels ?? {},
        requires,
        supervisorId: req.supervisorId ?? null,
        tokenHash,
        policy: policy.name,
        heartbeatIntervalMs: policy.heartbeat.expectedIntervalMs,
        startupTimeoutMs: policy.startupTimeoutMs,
        exclusive: req.exclusive === true,
      });
      const { agent } = reg;
      if (reg.replacedIncarnation !== null) {
        // The previous process of this slot is gone or about to be: its token is void, its tasks go
        // back to the queue now (fenced by their versions), its open conditions were closed.
        hooks.forget(agent.id, 'replaced');
        for (const c of reg.closed) watchdog.events.condition(c);
        const released = await store.releaseAgentTasks({ agentId: agent.id, reason: 'agent_replaced' });
        for (const t of released) ctx.applyTransition(t);
        ctx.logger.info(
          {
            agentId: agent.id,
            key: agent.key,
            incarnation: agent.incarnation,
            replaced: reg.replacedIncarnation,
            released: released.length,
          },
          'agent registered again: a new incarnation replaced the previous one',
        );
      } else {
        ctx.logger.info(
          {
            agentId: agent.id,
            agentType: agent.agentType,
            key: agent.key ?? undefined,
            taskTypes: agent.taskTypes,
          },
          'agent registered',
        );
      }
      watchdog.events.remember(agent.id, agent.status);
      if (bus.active) bus.publish({ type: 'agent.registered', at: agent.startedAt, agent });
      ctx.eventRelay.relayAgent(agent.id, 'registered');
      return {
        agent,
        token,
        heartbeatIntervalMs: policy.heartbeat.expectedIntervalMs,
        incarnation: agent.incarnation,
        snapshot: await slotSnapshot(agent),
      };
    },

    async agentHeartbeat(caller, agentId, req) {
      requireActsAs(caller, agentId, 'heartbeat');
      let agentType: string;
      let incarnation: number;
      if (caller.kind === 'agent') {
        ({ agentType, incarnation } = caller);
      } else {
        const agent = await mustGetAgent(agentId);
        ({ agentType, incarnation } = agent);
      }
      const policy = ctx.policies.current().forAgentType(agentType);
      for (const d of req.dependencies ?? []) {
        await ctx.sharedDependencies.report(d.name, d, `agent:${agentId}`);
      }
      const beats =
        req.tasks !== undefined && req.tasks.length > 0
          ? await recordBeats(ctx, agentId, req.tasks)
          : { outcomes: [], held: [] };
      // A supervisor's plain children: their entries are their heartbeats (supervision.ts).
      const childBeats =
        req.children !== undefined && req.children.length > 0
          ? await supervision.childBeats(agentId, req.children)
          : [];
      // Written with the other agents' heartbeats of this turn; takes the commands queued for it.
      const leaseMs = watchdog.agents.leaseMsFor(agentId, policy);
      const [result, ...childResults] = await Promise.all([
        ctx.writes.agentHeartbeat(heartbeatInput(agentId, incarnation, req, policy, leaseMs)),
        ...childBeats.map((b) => ctx.writes.agentHeartbeat(b.input)),
      ]);
      if (result === null || result === undefined) {
        const agent = await store.getAgent(agentId);
        if (agent === null) throw new NotFoundError('agent', agentId);
        if (agent.incarnation !== incarnation) {
          throw new RouseError(
            'unauthorized',
            `agent ${agentId} was registered again (incarnation ${agent.incarnation}); this token belonged to incarnation ${incarnation}`,
            { agentId, incarnation: agent.incarnation },
          );
        }
        throw new RouseError('unauthorized', `agent ${agentId} has ${agent.status}; register again`, {
          agentId,
          status: agent.status,
        });
      }
      hooks.confirmed(agentId, incarnation);
      if (req.acks !== undefined && req.acks.length > 0) await recordAnswers(agentId, req.acks);
      if (req.metrics?.iterationMs !== undefined)
        watchdog.baselines.addIteration(agentType, req.metrics.iterationMs);
      await watchdog.agents.evaluate(result.watch, req.tasks === undefined ? null : beats.held);
      if (req.fatal !== undefined && req.fatal.length > 0) supervision.fatal(agentId, agentType, req.fatal);
      // A plain child's commands are its supervisor's to carry out: delivered here, naming the child.
      const commands = [...result.commands];
      const childWatches: AgentWatch[] = [];
      for (const [i, child] of childResults.entries()) {
        if (child === null || child === undefined) continue;
        const { agentId: childId, agentKey } = childBeats[i]!.child;
        for (const c of child.commands) commands.push({ ...c, agentId: childId, agentKey });
        childWatches.push(child.watch);
      }
      // The children's evaluations run a few at a time: the condition writes of those in flight
      // together share one batched write, where one child after another paid a round trip each (a
      // stall that hit many children at once held the supervisor's heartbeat for tens of ms on
      // PostgreSQL, and with it the acknowledgements the heartbeat carried).
      await forEachLimited(childWatches, BACKGROUND_STORE_CALLS, (watch) =>
        watchdog.agents.evaluate(watch, null),
      );
      // A supervisor's heartbeat stands for its plain children's: it must come as often as theirs must.
      const intervalMs = Math.min(
        policy.heartbeat.expectedIntervalMs,
        ...childBeats.map((b) => b.input.heartbeatIntervalMs),
      );
      return { heartbeatIntervalMs: intervalMs, tasks: beats.outcomes, commands };
    },

    async leave(caller, agentId) {
      requireActsAs(caller, agentId, 'leave');
      const agent = await mustGetAgent(agentId);
      // A supervised agent leaves when its supervisor stops or restarts it: the supervisor's
      // acknowledgement (with the process's last output) ends what is open, not the leaving.
      const supervisor = agent.supervisorId === null ? null : await store.getAgent(agent.supervisorId);
      const supervised =
        supervisor !== null && supervisor.status !== 'left' && supervisor.status !== 'terminated';
      await this.endAgent(agentId, 'left', 'the agent left', { keepInterventions: supervised });
    },

    async endAgent(agentId, lifecycle, reason, options = {}) {
      // First stop its claims (waiting or between two awaits), then release what it holds.
      hooks.forget(agentId, 'left');
      ctx.waiters.releaseAgent(agentId);
      const code = lifecycle === 'left' ? 'agent_left' : 'agent_terminated';
      const released = await store.releaseAgentTasks({ agentId, reason: code });
      for (const t of released) ctx.applyTransition(t);
      const closed = await store.endAgent({ agentId, lifecycle, reason });
      for (const c of closed) watchdog.events.condition(c);
      await ctx.commands.clear(agentId);
      if (!options.keepInterventions) await ctx.interventions.agentEnded(agentId, reason);
      await ctx.alerts.clear({ agentId });
      ctx.logger.info(
        { agentId, released: released.length, reason },
        lifecycle === 'left' ? 'agent left' : 'agent terminated',
      );
      await watchdog.events.status(agentId, lifecycle);
      watchdog.events.forget(agentId);
    },

    async getAgent(caller, agentId) {
      requireRead(caller, 'read agents');
      return mustGetAgent(agentId);
    },

    async listAgents(caller, query = {}) {
      requireRead(caller, 'list agents');
      const page = await store.listAgents(query);
      return { agents: page.agents.map(current), nextCursor: page.nextCursor };
    },

    async diagnoseAgent(caller, agentId) {
      requireRead(caller, 'diagnose agents');
      const agent = await mustGetAgent(agentId);
      const { interventions } = await store.listInterventions({ agentId, limit: 50 });
      return diagnoseAgent({
        agent,
        now: clock.now(),
        policy: ctx.policies.current().forAgentType(agent.agentType),
        interventions,
      });
    },

    async nextCommands(caller, agentId, req, signal) {
      requireActsAs(caller, agentId, 'take commands');
      return { commands: await ctx.commands.next(agentId, req.waitMs ?? 0, signal) };
    },

    async acknowledgeCommands(caller, agentId, req) {
      requireActsAs(caller, agentId, 'answer commands');
      await mustGetAgent(agentId);
      return { recorded: await recordAnswers(agentId, req.acks) };
    },

    async sendCommand(caller, agentId, command) {
      requireAdmin(caller, 'send commands to agents');
      const agent = await mustGetAgent(agentId);
      // Recorded before it is queued: its answer may come back at once (a supervisor's long-poll).
      const sent = { ...command, id: newCommandId() };
      const intervention = await ctx.interventions.recordManual({
        agentId,
        incarnation: agent.incarnation,
        command: sent,
        evidence: {
          status: agent.status,
          conditions: agent.conditions.map((c) => ({
            condition: c.condition,
            since: c.since,
            taskId: c.taskId,
          })),
          metrics: agent.metrics,
          lastHeartbeatAt: agent.lastHeartbeatAt,
        },
      });
      await ctx.commands.enqueue(agentId, sent);
      ctx.logger.info(
        {
          agentId,
          command: command.type,
          commandId: sent.id,
          taskId: command.taskId,
          intervention: intervention?.id,
        },
        'command queued for agent',
      );
      return { commandId: sent.id, intervention };
    },
  };
}
