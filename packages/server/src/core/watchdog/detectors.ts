/**
 * The watchdog's detectors (docs/design.md §6.2) for one agent: from its watch state (what the store keeps
 * of it), the tasks it holds, the dependencies it needs, and its type's iteration baseline, every
 * condition that should be open at `now`, and the next instant at which that answer could change by
 * the passing of time alone. Pure: `now` is given, and nothing is remembered between calls.
 *
 * `heartbeat_timeout` is not decided here: the agent's lease (an exact timer) decides it.
 *
 * - Quiet period: before `startedAt + quietPeriodMs` nothing opens (also when `now` is before
 *   `startedAt`: a clock that went back).
 * - `progress_stalled`, the agent's own progress (monitor mode): it reports `running`, has reported
 *   progress at least once, and neither its progress nor its status changed for `stallThresholdMs`
 *   (the clock restarts when it starts running: an idle agent has nothing to progress on, and an
 *   erring or terminating one has its own signals). A held task: `progressChangedAt +
 *   stallTimeoutMs` passed (one condition per task, `taskId` set). Off when the policy disables
 *   stall detection.
 * - `dependency_down`: a dependency the agent, its policy or a held task needs is down or
 *   rate-limited now (one condition listing them all).
 * - `resource_runaway`: any of the four rules of `runaway.ts` (one condition; the first rule that
 *   holds gives the evidence, the others are listed under `also`); and, per held task, its spend past
 *   a budget limit as the agent's last metrics report it (`task-budget.ts`; `taskId` set).
 * - `error_persisting`: it has reported `error` for `errorTimeoutMs` (unless null).
 *
 * A condition's `since` is when it became true (a stall: progressChangedAt + threshold), never before
 * the quiet period ended; for a condition already open, the coordinator keeps its own `since`.
 */
import type {
  AgentCondition,
  AgentMetrics,
  ConditionKind,
  Json,
  JsonObject,
  ReportedAgentStatus,
} from '@rouse/protocol';
import { type DependencyView, isDependencyUnavailable } from '../diagnosis.js';
import type { ResolvedPolicy } from '../policies/resolved-policy.js';
import type { BaselineView } from './baseline.js';
import {
  cpuPinnedOpensAt,
  cpuPinnedRule,
  iterationSlowRule,
  type RunawayFinding,
  rssGrowthRule,
  rssLimitRule,
} from './runaway.js';
import type { SampleRing } from './samples.js';
import { budgetFindings } from './task-budget.js';

/** What the store keeps of an agent for its detectors. */
export interface AgentWatchState {
  /** This incarnation's registration (the quiet period runs from here). */
  startedAt: number;
  reportedStatus: ReportedAgentStatus;
  /** When it started reporting its current status. */
  reportedStatusSince: number;
  /** What it said with its status (the last error message), or null. */
  statusMessage: string | null;
  /** Its own progress (monitor mode), or null when it never reported any. */
  progress: Json | null;
  phase?: string | null;
  /** When its own progress or phase last changed; null = never reported progress. */
  progressChangedAt: number | null;
  /** Its recent metric samples, oldest first. */
  samples: SampleRing;
  /** Dependencies it declared at registration. */
  requires: readonly string[];
  /** The metrics of its last heartbeat that carried some (`budgets`: held tasks' spend). */
  metrics?: AgentMetrics | null;
}

/** A task the agent holds, as its detectors see it. */
export interface HeldTaskWatch {
  taskId: string;
  progress: number | null;
  phase: string | null;
  /** The task's stall clock; null before it starts. */
  progressChangedAt: number | null;
  /** The task's `timing.stallTimeoutMs`. */
  stallTimeoutMs: number;
  requires: readonly string[];
}

export interface EvaluateAgentInput {
  now: number;
  policy: ResolvedPolicy;
  agent: AgentWatchState;
  tasks: readonly HeldTaskWatch[];
  /** Reported dependency states by name (a name not in the map is taken as up). */
  dependencies: ReadonlyMap<string, DependencyView>;
  /** The agent type's iteration-time baseline, or null when there is none yet. */
  iterationBaseline: BaselineView | null;
}

/** A condition the detectors hold open (the wire's `AgentCondition`). */
export type DetectedCondition = AgentCondition;

export interface AgentEvaluation {
  /** Every condition that should be open now (except `heartbeat_timeout`), in kind order. */
  open: DetectedCondition[];
  /**
   * The earliest instant after `now` at which the answer could change with no new heartbeat (a stall
   * threshold, the error timeout, a dependency's `until`, the end of the quiet period, a CPU window
   * filling), or null: arm one timer there and evaluate again.
   */
  nextCheckAt: number | null;
}

export function evaluateAgent(input: EvaluateAgentInput): AgentEvaluation {
  const { now, policy, agent } = input;
  const quietEnd = agent.startedAt + policy.quietPeriodMs;
  if (now < quietEnd) return { open: [], nextCheckAt: quietEnd };

  const open: DetectedCondition[] = [];
  const later: number[] = [];
  const add = (condition: ConditionKind, since: number, taskId: string | null, evidence: JsonObject) =>
    open.push({ condition, since: Math.max(since, quietEnd), taskId, evidence });

  // progress_stalled
  if (policy.stallDetection.enabled) {
    if (agent.progressChangedAt !== null && agent.reportedStatus === 'running') {
      const unchangedSinceAt = Math.max(agent.progressChangedAt, agent.reportedStatusSince);
      const thresholdMs = policy.stallDetection.stallThresholdMs;
      const due = unchangedSinceAt + thresholdMs;
      if (now >= due) {
        add('progress_stalled', due, null, {
          taskId: null,
          progress: agent.progress,
          phase: agent.phase ?? null,
          progressField: policy.stallDetection.progressField,
          unchangedSinceAt,
          unchangedForMs: now - unchangedSinceAt,
          thresholdMs,
        });
      } else later.push(due);
    }
    for (const task of input.tasks) {
      if (task.progressChangedAt === null) continue;
      const due = task.progressChangedAt + task.stallTimeoutMs;
      if (now >= due) {
        add('progress_stalled', due, task.taskId, {
          taskId: task.taskId,
          progress: task.progress,
          phase: task.phase,
          unchangedSinceAt: task.progressChangedAt,
          unchangedForMs: now - task.progressChangedAt,
          thresholdMs: task.stallTimeoutMs,
        });
      } else later.push(due);
    }
  }

  // dependency_down
  const down = unavailableDependencies(input);
  if (down.length > 0) {
    add('dependency_down', Math.min(...down.map((d) => d.since)), null, {
      dependencies: down.map((d) => ({ ...d, neededBy: [...d.neededBy] })),
    });
    for (const d of down) if (d.until !== null) later.push(d.until);
  }

  // resource_runaway
  const lastProgressAt = latest([agent.progressChangedAt, ...input.tasks.map((t) => t.progressChangedAt)]);
  const { resources } = policy;
  const findings = [
    rssLimitRule(agent.samples, resources),
    rssGrowthRule(agent.samples, resources),
    cpuPinnedRule(agent.samples, now, resources, lastProgressAt),
    iterationSlowRule(agent.samples, resources, input.iterationBaseline),
  ].filter((f): f is RunawayFinding => f !== null);
  if (findings.length > 0) {
    const [first, ...others] = findings as [RunawayFinding, ...RunawayFinding[]];
    const evidence: JsonObject = { ...first.evidence };
    if (others.length > 0) evidence.also = others.map((f) => f.evidence);
    add('resource_runaway', Math.min(...findings.map((f) => f.since)), null, evidence);
  }
  const held = new Set(input.tasks.map((t) => t.taskId));
  for (const b of budgetFindings(agent.metrics?.budgets, held))
    add('resource_runaway', now, b.taskId, b.evidence);
  const cpuAt = cpuPinnedOpensAt(agent.samples, resources, lastProgressAt);
  if (cpuAt !== null && cpuAt > now) later.push(cpuAt);

  // error_persisting
  if (agent.reportedStatus === 'error' && policy.errorTimeoutMs !== null) {
    const due = agent.reportedStatusSince + policy.errorTimeoutMs;
    if (now >= due) {
      add('error_persisting', due, null, {
        since: agent.reportedStatusSince,
        forMs: now - agent.reportedStatusSince,
        timeoutMs: policy.errorTimeoutMs,
        message: agent.statusMessage,
      });
    } else later.push(due);
  }

  const future = later.filter((t) => t > now);
  return { open, nextCheckAt: future.length > 0 ? Math.min(...future) : null };
}

/** A needed dependency that is unavailable now, and who needs it. */
interface DownDependency {
  name: string;
  state: DependencyView['state'];
  until: number | null;
  since: number;
  reportedBy: string | null;
  /** `"agent"` (it declared it), `"policy"`, or the ids of held tasks that require it. */
  neededBy: string[];
}

function unavailableDependencies(input: EvaluateAgentInput): DownDependency[] {
  const needed = new Map<string, string[]>();
  const need = (name: string, by: string) => {
    const list = needed.get(name) ?? [];
    if (!list.includes(by)) list.push(by);
    needed.set(name, list);
  };
  for (const name of input.agent.requires) need(name, 'agent');
  for (const name of input.policy.dependencies) need(name, 'policy');
  for (const task of input.tasks) for (const name of task.requires) need(name, task.taskId);
  const out: DownDependency[] = [];
  for (const [name, neededBy] of [...needed].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const dep = input.dependencies.get(name);
    if (dep === undefined || !isDependencyUnavailable(dep, input.now)) continue;
    out.push({
      name,
      state: dep.state,
      until: dep.until,
      since: dep.since,
      reportedBy: dep.reportedBy,
      neededBy,
    });
  }
  return out;
}

function latest(times: readonly (number | null)[]): number | null {
  let max: number | null = null;
  for (const t of times) if (t !== null && (max === null || t > max)) max = t;
  return max;
}
