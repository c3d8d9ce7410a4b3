/**
 * Agents (PROTOCOL.md "Agents"): registration with a fresh per-agent token, the agent heartbeat
 * (its tasks' beats in one batch, dependency reports, commands back), graceful leave, reads, and
 * operator commands.
 */
import type {
  Agent,
  AgentCommand,
  AgentHeartbeatRequest,
  AgentHeartbeatResponse,
  AgentStatus,
  RegisterAgentRequest,
  RegisterAgentResponse,
  WriteOutcome,
} from '@rouse/protocol';
import { NotFoundError } from '../core/errors.js';
import { newAgentToken, requireActsAs, requireAdmin, requireEnrollment, requireRead } from './auth.js';
import { AGENT_MEMORY_MAX, type ClaimService } from './claim-tasks.js';
import type { Caller } from './coordinator.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { newId } from './ids.js';
import { recordBeats } from './task-heartbeats.js';

export interface AgentOperations {
  registerAgent(caller: Caller, req: RegisterAgentRequest): Promise<RegisterAgentResponse>;
  agentHeartbeat(
    caller: Caller,
    agentId: string,
    req: AgentHeartbeatRequest,
  ): Promise<AgentHeartbeatResponse>;
  leave(caller: Caller, agentId: string): Promise<void>;
  getAgent(caller: Caller, agentId: string): Promise<Agent>;
  listAgents(caller: Caller): Promise<Agent[]>;
  sendCommand(caller: Caller, agentId: string, command: AgentCommand): Promise<void>;
}

export function createAgentOperations(ctx: CoordinatorContext, claims: ClaimService): AgentOperations {
  const { store, clock, bus } = ctx;
  /**
   * Last status seen per agent, to publish `agent.status` only on change; emptied when it grows past
   * `AGENT_MEMORY_MAX` (agents that die without leaving are never removed one by one), which at worst
   * publishes a live agent's unchanged status once more.
   */
  const statuses = new Map<string, AgentStatus>();
  const rememberStatus = (agentId: string, status: AgentStatus): void => {
    if (statuses.size >= AGENT_MEMORY_MAX && !statuses.has(agentId)) statuses.clear();
    statuses.set(agentId, status);
  };

  async function publishStatus(agentId: string): Promise<void> {
    ctx.eventRelay.relayAgent(agentId, 'status');
    if (!bus.active) return;
    const agent = await store.getAgent(agentId);
    if (agent !== null) bus.publish({ type: 'agent.status', at: clock.now(), agent });
  }

  async function mustGetAgent(agentId: string): Promise<Agent> {
    const agent = await store.getAgent(agentId);
    if (agent === null) throw new NotFoundError('agent', agentId);
    return agent;
  }

  return {
    async registerAgent(caller, req) {
      requireEnrollment(caller);
      const id = newId('agt', clock.now());
      const { token, tokenHash } = newAgentToken();
      const agent = await store.registerAgent({
        id,
        agentType: req.agentType,
        name: req.name ?? `${req.agentType}-${id.slice(-6).toLowerCase()}`,
        host: req.host ?? null,
        pid: req.pid ?? null,
        taskTypes: req.taskTypes ?? [],
        labels: req.labels ?? {},
        tokenHash,
      });
      rememberStatus(id, agent.status);
      ctx.logger.info(
        { agentId: id, agentType: req.agentType, taskTypes: agent.taskTypes },
        'agent registered',
      );
      if (bus.active) bus.publish({ type: 'agent.registered', at: agent.registeredAt, agent });
      ctx.eventRelay.relayAgent(id, 'registered');
      return { agent, token, heartbeatIntervalMs: ctx.options.timingDefaults.heartbeatIntervalMs };
    },

    async agentHeartbeat(caller, agentId, req) {
      requireActsAs(caller, agentId, 'heartbeat');
      for (const d of req.dependencies ?? []) {
        await ctx.sharedDependencies.report(d.name, d, `agent:${agentId}`);
      }
      const tasks: WriteOutcome[] =
        req.tasks !== undefined && req.tasks.length > 0 ? await recordBeats(ctx, agentId, req.tasks) : [];
      // Written with the other agents' heartbeats of this turn; takes the commands queued for it.
      const commands = await ctx.writes.agentHeartbeat({ agentId, status: req.status, metrics: req.metrics });
      if (commands === null) throw new NotFoundError('agent', agentId);
      if (req.status !== undefined && statuses.get(agentId) !== req.status) {
        rememberStatus(agentId, req.status);
        await publishStatus(agentId);
      }
      return { heartbeatIntervalMs: ctx.options.timingDefaults.heartbeatIntervalMs, tasks, commands };
    },

    async leave(caller, agentId) {
      requireActsAs(caller, agentId, 'leave');
      await mustGetAgent(agentId);
      // First stop its claims (waiting or between two awaits), then release what it holds.
      claims.forgetAgent(agentId);
      ctx.waiters.releaseAgent(agentId);
      const released = await store.releaseAgentTasks({ agentId, reason: 'agent_left' });
      for (const t of released) ctx.applyTransition(t);
      await store.setAgentStatus(agentId, 'left');
      await ctx.commands.clear(agentId);
      statuses.delete(agentId);
      ctx.logger.info({ agentId, released: released.length }, 'agent left');
      await publishStatus(agentId);
    },

    async getAgent(caller, agentId) {
      requireRead(caller, 'read agents');
      return mustGetAgent(agentId);
    },

    async listAgents(caller) {
      requireRead(caller, 'list agents');
      return store.listAgents();
    },

    async sendCommand(caller, agentId, command) {
      requireAdmin(caller, 'send commands to agents');
      await mustGetAgent(agentId);
      await ctx.commands.enqueue(agentId, command);
      ctx.logger.info({ agentId, command: command.type, taskId: command.taskId }, 'command queued for agent');
    },
  };
}
