/**
 * The coordinator's read side of the watchdog: agents' recent heartbeats and samples, the policies
 * in force (and a check of a candidate file), the gauges the metrics and the dashboard show,
 * interventions, alerts, conditions and dependencies, and dependency reports from agents or an admin.
 */
import { AGENT_STATUSES, type AgentStatus, CONDITION_KINDS, type ConditionKind } from '@rouse/protocol';
import { NotFoundError, RouseError } from '../core/errors.js';
import { checkPolicies } from '../core/policies/check-policies.js';
import { deriveAgentStatus } from '../core/watchdog/agent-status.js';
import { toSample } from '../store/agent-row.js';
import { requireRead } from './auth.js';
import type { Coordinator } from './coordinator.js';
import type { CoordinatorContext } from './coordinator-context.js';

export type WatchdogReads = Pick<
  Coordinator,
  | 'agentHistory'
  | 'agentSamples'
  | 'policies'
  | 'checkPolicies'
  | 'watchdogGauges'
  | 'listInterventions'
  | 'getIntervention'
  | 'listAlerts'
  | 'getAlert'
  | 'listConditions'
  | 'listDependencies'
  | 'reportDependency'
>;

export function createWatchdogReads(ctx: CoordinatorContext): WatchdogReads {
  return {
    async agentHistory(caller, agentId) {
      requireRead(caller, 'read agent history');
      const [watch] = await ctx.store.getAgentWatches([agentId]);
      return watch === undefined
        ? null
        : { gaps: watch.gaps, samples: watch.samples.toArray().map(toSample) };
    },
    async agentSamples(caller, agentIds) {
      requireRead(caller, 'read agent history');
      if (agentIds.length === 0) return new Map();
      const watches = await ctx.store.getAgentWatches(agentIds);
      return new Map(watches.map((w) => [w.agentId, w.samples.toArray().map(toSample)]));
    },
    async policies(caller) {
      requireRead(caller, 'read the policies');
      return ctx.policies.response();
    },
    async checkPolicies(caller, source, file) {
      requireRead(caller, 'check policies');
      return checkPolicies(source, file);
    },
    async watchdogGauges() {
      const agentsByStatus = Object.fromEntries(AGENT_STATUSES.map((s) => [s, 0])) as Record<
        AgentStatus,
        number
      >;
      const openConditions = Object.fromEntries(CONDITION_KINDS.map((c) => [c, 0])) as Record<
        ConditionKind,
        number
      >;
      for (const c of await ctx.store.agentStatusCounts()) {
        agentsByStatus[deriveAgentStatus(c)] += c.count;
        if (c.lifecycle === 'active') for (const kind of c.openConditions) openConditions[kind] += c.count;
      }
      const { evaluations, seconds } = ctx.watchdog.agents.stats;
      const ladder = ctx.watchdog.ladder.stats;
      return {
        agentsByStatus,
        openConditions,
        evaluations,
        evaluationSeconds: seconds,
        ladderSteps: ladder.steps,
        ladderSeconds: ladder.seconds,
        alertNotifications: ctx.alerts.deliveryCounts(),
      };
    },
    async listInterventions(caller, query) {
      requireRead(caller, 'read interventions');
      return ctx.interventions.list(query);
    },
    async getIntervention(caller, id) {
      requireRead(caller, 'read interventions');
      const found = await ctx.interventions.get(id);
      if (found === null) throw new NotFoundError('intervention', id);
      return found;
    },
    async listAlerts(caller, query) {
      requireRead(caller, 'read alerts');
      return ctx.alerts.list(query);
    },
    async getAlert(caller, id) {
      requireRead(caller, 'read alerts');
      const found = await ctx.alerts.get(id);
      if (found === null) throw new NotFoundError('alert', id);
      return found;
    },
    async listConditions(caller, query) {
      requireRead(caller, 'read conditions');
      return ctx.store.listConditions(query);
    },

    async listDependencies(caller) {
      requireRead(caller, 'read dependencies');
      return ctx.dependencies.list();
    },
    async reportDependency(caller, { name, ...report }) {
      if (caller.kind !== 'admin' && caller.kind !== 'agent') {
        throw new RouseError('forbidden', 'only the admin token or an agent token may report dependencies', {
          caller: caller.kind,
        });
      }
      return ctx.sharedDependencies.report(
        name,
        report,
        caller.kind === 'agent' ? `agent:${caller.agentId}` : 'admin',
      );
    },
  };
}
