/**
 * Human text for agent diagnosis reasons: one message per reason that says what happened, with
 * numbers (no trailing period; the summary adds it), and suggestions that say what to do next. Pure;
 * reads only the agent and the reason's details.
 */
import type { Agent, AgentDiagnosisCode, Json, JsonObject } from '@rouse/protocol';
import { formatDuration, formatSize } from '@rouse/protocol';

const iso = (ms: unknown): string =>
  typeof ms === 'number' ? new Date(ms).toISOString() : 'an unknown time';
const dur = (ms: unknown): string =>
  typeof ms === 'number' ? formatDuration(Math.max(0, Math.round(ms))) : '?';
const size = (bytes: unknown): string => (typeof bytes === 'number' ? formatSize(bytes) : '?');
const str = (v: unknown): string => (v === null || v === undefined ? 'unknown' : String(v));
const quoted = (v: unknown): string => (typeof v === 'string' && v !== '' ? `: ${JSON.stringify(v)}` : '');
const command = (agent: Agent, type: string) => `POST /v1/agents/${agent.id}/commands {"type":"${type}"}`;

export function agentMessageFor(agent: Agent, code: AgentDiagnosisCode, d: JsonObject): string {
  switch (code) {
    case 'left':
      return `it left (a graceful shutdown) at ${iso(d.endedAt)}`;
    case 'terminated':
      return `the watchdog terminated it at ${iso(d.endedAt)}`;
    case 'heartbeat_timeout':
      if (d.lastHeartbeatAt === null) {
        return `it has sent no heartbeat since it registered at ${iso(d.registeredAt)} (startup timeout ${dur(d.timeoutMs)}): the process died or hangs before its first beat`;
      }
      return `no heartbeat for ${dur(d.silentForMs)} (timeout ${dur(d.timeoutMs)}): the process died or hangs`;
    case 'terminating':
      return 'it reports that it is shutting down';
    case 'progress_stalled':
      if (typeof d.taskId === 'string') {
        return `heartbeats arrive but held task ${d.taskId} has not progressed for ${dur(d.unchangedForMs)} (stall timeout ${dur(d.thresholdMs)}${progressText(d.progress, d.phase, ', progress ')})`;
      }
      return `heartbeats arrive but its ${typeof d.progressField === 'string' ? d.progressField : 'progress'}${progressText(d.progress, d.phase, ' ', true)} has not changed for ${dur(d.unchangedForMs)} (threshold ${dur(d.thresholdMs)})`;
    case 'reported_error':
      return `it reports an error${quoted(d.message)}${typeof d.errorTimeoutMs === 'number' ? `; error_persisting opens if it lasts ${dur(d.errorTimeoutMs)}` : ''}`;
    case 'error_persisting':
      return `it has reported an error for ${dur(d.forMs)} (limit ${dur(d.timeoutMs)})${quoted(d.message)}`;
    case 'dependency_down':
      return `it needs ${joinAnd(dependencies(d).map(dependencyText))}`;
    case 'resource_runaway':
      return runawayText(agent, d);
    case 'never_heartbeat': {
      const when =
        typeof d.inMs === 'number' && d.inMs < 0 ? `overdue by ${dur(-d.inMs)}` : `in ${dur(d.inMs)}`;
      return `it registered at ${iso(d.registeredAt)} and has sent no heartbeat yet; it is lost unless one arrives by ${iso(d.deadline)} (${when})`;
    }
    case 'in_quiet_period':
      return `it started at ${iso(d.startedAt)} and is in its quiet period until ${iso(d.until)} (in ${dur(d.inMs)}): detectors hold off`;
    case 'healthy': {
      const tasks =
        Array.isArray(d.currentTaskIds) && d.currentTaskIds.length > 0
          ? ` with ${d.currentTaskIds.length} task(s)`
          : '';
      const last = d.sinceLastMs === null ? 'none yet' : `last ${dur(d.sinceLastMs)} ago`;
      return `it is ${str(d.reportedStatus)}${tasks}, heartbeats (${last}, every ${dur(d.heartbeatIntervalMs)}) and no detector sees a problem`;
    }
  }
}

export function agentSuggestionsFor(agent: Agent, code: AgentDiagnosisCode, d: JsonObject): string[] {
  const restart = `restart it: ${command(agent, 'restart')}`;
  switch (code) {
    case 'left':
      return [
        agent.key === null
          ? 'start a new agent if the work still needs one'
          : `start it again if still needed: registering with key "${agent.key}" makes incarnation ${agent.incarnation + 1}`,
      ];
    case 'terminated':
      return [`see what the watchdog did and why: GET /v1/interventions?agentId=${agent.id}`];
    case 'heartbeat_timeout': {
      const where =
        agent.host !== null || agent.pid !== null
          ? `check the process on ${agent.host ?? 'its host'}${agent.pid === null ? '' : ` (pid ${agent.pid})`}: is it alive, is it stuck?`
          : `check the process that runs agent ${agent.id}: is it alive, is it stuck?`;
      const out = [where, `or ${restart}`];
      if (agent.supervisorId !== null)
        out.push(`its supervisor ${agent.supervisorId} restarts it if it exited`);
      return out;
    }
    case 'terminating':
      return ['nothing to do: it leaves shortly (if its heartbeats stop first, it becomes lost)'];
    case 'progress_stalled':
      if (typeof d.taskId === 'string') {
        return [
          `see why the task is stuck: rouse why ${d.taskId}`,
          `read its output: rouse logs ${d.taskId}`,
        ];
      }
      return [`wake it: ${command(agent, 'wake')}`, `if it stays stuck, ${restart}`];
    case 'reported_error':
    case 'error_persisting':
      return [
        `look at its logs${agent.host === null ? '' : ` on ${agent.host}`} for the cause`,
        `once the cause is fixed, ${restart}`,
      ];
    case 'dependency_down':
      return dependencies(d).map(
        (dep) =>
          `wait for ${str(dep.name)} to recover, or report it up: POST /v1/dependencies/${str(dep.name)}/reports {"state":"up"}`,
      );
    case 'resource_runaway':
      return runawaySuggestions(agent, d);
    case 'never_heartbeat':
      return typeof d.inMs === 'number' && d.inMs < 0
        ? [
            `check that its process started${agent.host === null ? '' : ` on ${agent.host}`} and can reach the coordinator`,
          ]
        : ['nothing to do yet: its first heartbeat is due'];
    case 'in_quiet_period':
    case 'healthy':
      return [];
  }
}

function runawayText(agent: Agent, d: JsonObject): string {
  const also =
    Array.isArray(d.also) && d.also.length > 0 ? ` (also: ${d.also.map((a) => ruleOf(a)).join(', ')})` : '';
  switch (d.rule) {
    case 'rss_limit':
      return `its memory (RSS ${size(d.rssBytes)}) is above its limit of ${size(d.rssLimitBytes)}${also}`;
    case 'rss_growth':
      return `its memory grows steadily by ${size(d.slopeBytesPerMin)}/min over ${dur(Number(d.toAt) - Number(d.fromAt))} (limit ${size(d.rssGrowthBytesPerMin)}/min, fit r² ${str(d.r2)}), from ${size(d.firstRssBytes)} to ${size(d.lastRssBytes)}${also}`;
    case 'cpu_pinned':
      return `its CPU has stayed above ${str(d.cpuPercentThreshold)} % since ${iso(d.pinnedSinceAt)} (window ${dur(d.windowMs)}) while its progress did not move${also}`;
    case 'iteration_slow':
      return d.exceeded === 'baseline'
        ? `its last iteration took ${dur(d.iterationMs)}, over ${str(d.iterationFactor)} × the ${agent.agentType} p95 of ${dur(d.baselineP95Ms)} (${dur(d.limitMs)})${also}`
        : `its last iteration took ${dur(d.iterationMs)}, over max_iteration ${dur(d.maxIterationMs)}${also}`;
    case 'task_budget':
      return `held task ${str(d.taskId)} spent ${budgetAmount(d.kind, d.used)}, past its budget of ${budgetAmount(d.kind, d.limit)}; the adapter stops it and fails it for good`;
    default:
      return `it runs away with its resources (${str(d.rule)})${also}`;
  }
}

function runawaySuggestions(agent: Agent, d: JsonObject): string[] {
  const restart = `restart it: ${command(agent, 'restart')}`;
  switch (d.rule) {
    case 'rss_limit':
    case 'rss_growth':
      return [
        `${restart} (frees its memory)`,
        `if it needs that much, raise resources.${d.rule} in its policy "${agent.policy}"`,
      ];
    case 'cpu_pinned':
      return [
        `wake it (it may spin in a loop): ${command(agent, 'wake')}`,
        `if that does not help, ${restart}`,
      ];
    case 'task_budget':
      return [
        `look at what the task did: rouse logs ${str(d.taskId)}`,
        'if it needs more, give the task a larger limit in its payload (maxTokens, maxCostUsd, maxTurns, maxWallClockMs) or the agent larger --max-* flags',
      ];
    default:
      return [
        `compare it with the other ${agent.agentType} agents: rouse agents`,
        `wake it: ${command(agent, 'wake')}`,
      ];
  }
}

/** A budget figure with its unit (`metrics.budgets[].kind`). */
function budgetAmount(kind: Json | undefined, value: Json | undefined): string {
  const n = typeof value === 'number' ? value : Number.NaN;
  switch (kind) {
    case 'tokens':
      return `${Math.round(n)} tokens`;
    case 'cost_usd':
      return `$${n.toFixed(4)}`;
    case 'turns':
      return `${Math.round(n)} turns`;
    case 'wall_clock_ms':
      return dur(n);
    default:
      return `${str(value)} (${str(kind)})`;
  }
}

function progressText(
  progress: Json | undefined,
  phase: Json | undefined,
  lead: string,
  paren = false,
): string {
  if (progress === null || progress === undefined) {
    return typeof phase === 'string' ? `${lead}${paren ? '(' : ''}phase "${phase}"${paren ? ')' : ''}` : '';
  }
  const p = `${JSON.stringify(progress)}${typeof phase === 'string' ? `, phase "${phase}"` : ''}`;
  return paren ? `${lead}(${p})` : `${lead}${p}`;
}

interface DependencyDetails {
  name?: Json;
  state?: Json;
  until?: Json;
  reportedBy?: Json;
}

function dependencies(d: JsonObject): DependencyDetails[] {
  return Array.isArray(d.dependencies)
    ? d.dependencies.filter((x): x is JsonObject => typeof x === 'object' && x !== null && !Array.isArray(x))
    : [];
}

function dependencyText(dep: DependencyDetails): string {
  const until = typeof dep.until === 'number' ? ` until ${iso(dep.until)}` : '';
  const by = typeof dep.reportedBy === 'string' ? `, reported by ${dep.reportedBy}` : '';
  return `${str(dep.name)}, which is ${str(dep.state)}${until}${by}`;
}

function joinAnd(items: string[]): string {
  if (items.length <= 1) return items[0] ?? 'a dependency that is unavailable';
  return `${items.slice(0, -1).join('; ')}; and ${items.at(-1)}`;
}

function ruleOf(evidence: Json): string {
  return typeof evidence === 'object' && evidence !== null && !Array.isArray(evidence)
    ? str(evidence.rule)
    : '?';
}
