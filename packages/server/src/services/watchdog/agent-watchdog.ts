/**
 * The watchdog's eyes (docs/design.md §6.1–6.2): after every agent heartbeat, and when a timer says the
 * answer may have changed, the core detectors run over what the store keeps of the agent (its watch
 * state), its held tasks and the dependency states; the conditions they find open and those no longer
 * true close, in one batched conditional write per event-loop turn. What needs no heartbeat to
 * change (a stall threshold reached, an error persisting, a dependency's `until` passing, the quiet
 * period ending, a CPU window filling) gets one timer per agent, on the coordinator that received its
 * heartbeats — these conditions need heartbeats to flow, so whichever coordinator receives them keeps
 * the timer. Lost agents (no heartbeat at all) are the lease watcher's (`agent-leases.ts`).
 */
import type { ConditionKind } from '@rouse/protocol';
import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.js';
import type { ResolvedPolicy } from '../../core/policies/resolved-policy.js';
import { deriveAgentStatus } from '../../core/watchdog/agent-status.js';
import { type DetectedCondition, evaluateAgent, type HeldTaskWatch } from '../../core/watchdog/detectors.js';
import { agentHeartbeatTimeoutMs } from '../../core/watchdog/phi.js';
import type { SampleRing } from '../../core/watchdog/samples.js';
import type { AgentWatch, ConditionChange, ConditionKey, ConditionRecord, Store } from '../../store/store.js';
import type { DependencyRegistry } from '../dependency-registry.js';
import { LeaseTimers } from '../lease-timers.js';
import type { WriteBatcher } from '../write-batcher.js';
import type { AgentEvents } from './agent-events.js';
import type { Baselines } from './baselines.js';
import { leaseMsOf as fixedLeaseMs } from './heartbeat-input.js';

/** A task the agent holds, as the detectors see it. */
export type HeldTask = HeldTaskWatch;

export interface AgentWatchdogDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  writes: WriteBatcher;
  dependencies: DependencyRegistry;
  policyFor: (agentType: string) => ResolvedPolicy;
  baselines: Baselines;
  events: AgentEvents;
  /** `coordinator:<id>`: who opened a condition. */
  actor: string;
}

export interface AgentWatchdog {
  /**
   * Run the detectors over an agent's state as its heartbeat's write left it. `held` lists the tasks
   * the heartbeat renewed (all it holds); null: read them from the store.
   */
  evaluate(watch: AgentWatch, held: readonly HeldTask[] | null): Promise<void>;
  /**
   * The lease its next heartbeat gets: timeout factor × interval, or — with an adaptive policy — the
   * phi timeout over the gaps its last heartbeat here returned (never below the policy's floor).
   */
  leaseMsFor(agentId: string, policy: ResolvedPolicy): number;
  /** Stop watching the agent here (it was lost, left or replaced). */
  forget(agentId: string): void;
  /** Agents with a detector timer armed here. */
  readonly watched: number;
  /** Evaluations run here, and the time spent in the detectors (seconds). */
  readonly stats: { evaluations: number; seconds: number };
  stop(): void;
  /** Resolves when no timer-driven evaluation is in flight. */
  idle(): Promise<void>;
}

/** Why a condition closed, for people reading the history. */
const CLOSE_REASONS: Record<ConditionKind, string> = {
  heartbeat_timeout: 'heartbeats resumed',
  progress_stalled: 'progress moved',
  dependency_down: 'its dependencies are available again',
  resource_runaway: 'back within its resource limits',
  error_persisting: 'no longer reporting an error',
};

/**
 * The ring's samples as the core reads them, plus the last heartbeat's metrics when the ring skipped
 * them (samples are spaced to cover the longest window; the limits must see the latest values).
 */
function samplesOf(watch: AgentWatch): SampleRing {
  const m = watch.metrics;
  const ring = watch.samples;
  if (
    m !== null &&
    watch.lastHeartbeatAt !== null &&
    (ring.length === 0 || ring.time(ring.length - 1) < watch.lastHeartbeatAt)
  ) {
    const latest = [
      watch.lastHeartbeatAt,
      m.rssBytes ?? null,
      m.cpuPercent ?? null,
      m.iterationMs ?? null,
    ] as const;
    return ring.append(latest, ring.length + 1);
  }
  return ring;
}

const keyOf = (c: ConditionKey): string => (c.taskId === null ? c.condition : `${c.condition} ${c.taskId}`);

export function createAgentWatchdog(deps: AgentWatchdogDeps): AgentWatchdog {
  const { store, clock, logger } = deps;
  const pending = new Set<Promise<void>>();
  const stats = { evaluations: 0, seconds: 0 };
  /** Adaptive lease lengths learned from each agent's gaps (agents with adaptive policies only). */
  const adaptiveLeaseMs = new Map<string, number>();
  const timers = new LeaseTimers(clock, (due) => {
    const p = recheck(due.taskId, due.version)
      .catch((err: unknown) => {
        const down = (err as { code?: unknown }).code === 'unavailable';
        logger[down ? 'debug' : 'warn']({ err, agentId: due.taskId }, 'watchdog re-check failed');
        // Look again a little later: the answer may still change by time alone.
        timers.track(due.taskId, due.version, clock.now() + 1000);
      })
      .finally(() => pending.delete(p));
    pending.add(p);
  });

  /** The running tasks the agent holds, read by id (only when it holds some: monitors hold none). */
  async function heldTasksOf(watch: AgentWatch): Promise<HeldTask[]> {
    if (watch.heldTaskIds.length === 0) return [];
    const tasks = await Promise.all(watch.heldTaskIds.map((id) => store.getTask(id)));
    return tasks.flatMap((t) =>
      t === null || t.agentId !== watch.agentId || t.status !== 'running'
        ? []
        : [
            {
              taskId: t.id,
              progress: t.progress,
              phase: t.phase,
              progressChangedAt: t.progressChangedAt,
              stallTimeoutMs: t.timing.stallTimeoutMs,
              requires: t.requires,
            },
          ],
    );
  }

  async function recheck(agentId: string, incarnation: number): Promise<void> {
    const [watch] = await store.getAgentWatches([agentId]);
    if (watch === undefined || watch.incarnation !== incarnation || watch.lifecycle !== 'active') return;
    await evaluate(watch, null);
  }

  async function evaluate(watch: AgentWatch, held: readonly HeldTask[] | null): Promise<void> {
    if (watch.lifecycle !== 'active') return;
    const policy = deps.policyFor(watch.agentType);
    const now = clock.now();
    if (policy.heartbeat.adaptive) {
      adaptiveLeaseMs.set(watch.agentId, agentHeartbeatTimeoutMs(policy.heartbeat, watch.gaps));
    } else adaptiveLeaseMs.delete(watch.agentId);
    const heldTasks = held ?? (await heldTasksOf(watch));
    const started = performance.now();
    const result = evaluateAgent({
      now,
      policy,
      agent: { ...watch, samples: samplesOf(watch) },
      tasks: heldTasks,
      dependencies: deps.dependencies.views(),
      iterationBaseline: deps.baselines.iteration(watch.agentType),
    });
    stats.evaluations++;
    stats.seconds += (performance.now() - started) / 1000;
    const wanted = new Map<string, DetectedCondition>(result.open.map((c) => [keyOf(c), c]));
    const open = new Set(watch.openConditions.map(keyOf));
    const changes: ConditionChange[] = [];
    for (const c of watch.openConditions) {
      if (c.condition === 'heartbeat_timeout') {
        // It heartbeats (its lease runs again): it is not lost any more.
        if (watch.leaseExpiresAt !== null && watch.leaseExpiresAt > now) changes.push(closing(watch, c));
        continue;
      }
      if (!wanted.has(keyOf(c))) changes.push(closing(watch, c, heldTasks));
    }
    for (const [key, c] of wanted) {
      if (open.has(key)) continue;
      changes.push({
        kind: 'open',
        agentId: watch.agentId,
        incarnation: watch.incarnation,
        condition: c.condition,
        taskId: c.taskId,
        since: c.since,
        evidence: c.evidence,
        openedBy: deps.actor,
      });
    }
    const nextCheckAt = result.nextCheckAt;
    if (nextCheckAt !== null) timers.track(watch.agentId, watch.incarnation, Math.max(nextCheckAt, now + 1));
    else timers.untrack(watch.agentId);
    const results =
      changes.length === 0 ? [] : await Promise.all(changes.map((c) => deps.writes.conditionChange(c)));
    const applied = results.filter((r): r is ConditionRecord => r !== null);
    for (const r of applied) {
      deps.events.condition(r);
      logger.info(
        {
          agentId: r.agentId,
          condition: r.condition,
          taskId: r.taskId ?? undefined,
          state: r.closedAt === null ? 'opened' : 'closed',
          ...(r.closedAt === null ? { evidence: r.evidence } : { reason: r.closeReason }),
        },
        r.closedAt === null ? 'condition opened' : 'condition closed',
      );
    }
    // The status as these changes left it (another coordinator's writes show up on its next beat).
    const kinds = new Set(watch.openConditions.map(keyOf));
    for (const c of changes) {
      if (c.kind === 'open') kinds.add(keyOf(c));
      else kinds.delete(keyOf(c));
    }
    const status = deriveAgentStatus({
      lifecycle: watch.lifecycle,
      reportedStatus: watch.reportedStatus,
      openConditions: [...kinds].map((k) => k.split(' ')[0] as ConditionKind),
    });
    await deps.events.status(watch.agentId, status);
  }

  function closing(watch: AgentWatch, c: ConditionKey, held?: readonly HeldTask[]): ConditionChange {
    const gone = c.taskId !== null && held !== undefined && !held.some((t) => t.taskId === c.taskId);
    return {
      kind: 'close',
      agentId: watch.agentId,
      condition: c.condition,
      taskId: c.taskId,
      reason: gone ? 'the task is no longer held' : CLOSE_REASONS[c.condition],
    };
  }

  return {
    evaluate,
    leaseMsFor(agentId, policy) {
      return (policy.heartbeat.adaptive ? adaptiveLeaseMs.get(agentId) : undefined) ?? fixedLeaseMs(policy);
    },
    forget(agentId) {
      timers.untrack(agentId);
      adaptiveLeaseMs.delete(agentId);
    },
    get watched() {
      return timers.size;
    },
    stats,
    stop() {
      timers.stop();
    },
    async idle() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
  };
}
