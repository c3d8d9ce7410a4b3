/**
 * The "why" diagnosis (docs/protocol.md `GET /v1/tasks/{id}/diagnosis`, `rouse why`): pure rules that
 * explain why a task is where it is, from plain inputs gathered by the services. No I/O, no clock:
 * `now` is given.
 *
 * Reasons come first-blocking-first: `reasons[0]` is the main one and drives the one-sentence summary.
 * Every reason carries its evidence in `details` (times are epoch ms, durations ms).
 */
import type {
  AgentStatus,
  DependencyState,
  Diagnosis,
  DiagnosisCode,
  DiagnosisReason,
  JsonObject,
  Task,
  TaskEvent,
} from '@rouse/protocol';
import { messageFor, suggestionsFor } from './diagnosis-text.js';

/** An agent that serves the task's type, as the diagnosis sees it. */
export interface DiagnosisAgent {
  id: string;
  /** Derived: `lost` once its lease ran out. */
  status: AgentStatus;
  /** Its last heartbeat (when a lost agent stopped), or null if it never sent one. */
  lastHeartbeatAt?: number | null;
  /** This incarnation's registration (when a lost agent that never heartbeat started). */
  startedAt?: number;
  lastPollAt: number | null;
  currentTaskIds: readonly string[];
  /** Waiting in a long-poll claim right now, so it has free capacity. @default false */
  waiting?: boolean;
}

/** A dependency's reported state. */
export interface DependencyView {
  state: DependencyState;
  /** Until when the state holds (`retryAfterMs`); null = until reported otherwise. */
  until: number | null;
  since: number;
  reportedBy: string | null;
}

export interface DiagnosisInput {
  task: Task;
  now: number;
  /** Registered agents that serve `task.type` (any status; inactive ones are ignored). */
  agents: readonly DiagnosisAgent[];
  /** Claimable tasks of the same type that would be claimed before this one. */
  queueAhead: number;
  dependencies: ReadonlyMap<string, DependencyView>;
  writeBackGraceMs: number;
  /** An agent whose last poll is older than this is "not polling". */
  pollStaleAfterMs: number;
  /** The latest history entry (actor and reason of a cancel, a write-back completion, ...). */
  lastEvent?: TaskEvent | null;
}

/** Agents in these states do not take work. */
export const INACTIVE_AGENT_STATUSES: readonly AgentStatus[] = ['left', 'terminated', 'lost', 'terminating'];
/** A running task is "late" when its last heartbeat is older than this many intervals. */
const HEARTBEAT_LATE_FACTOR = 1.5;

/**
 * A running task's last sign of life (its last heartbeat, else its start, else its claim) and, when
 * that is older than `HEARTBEAT_LATE_FACTOR` intervals, by how much the next heartbeat is late (else
 * null): the `heartbeat_late` rule, shared with the CLI's task list.
 */
export function heartbeatLateness(
  task: Pick<Task, 'lastHeartbeatAt' | 'startedAt' | 'claimedAt' | 'timing'>,
  now: number,
): { lastBeat: number; lateByMs: number | null } {
  const lastBeat = task.lastHeartbeatAt ?? task.startedAt ?? task.claimedAt ?? now;
  const { heartbeatIntervalMs } = task.timing;
  const late = now - lastBeat > heartbeatIntervalMs * HEARTBEAT_LATE_FACTOR;
  return { lastBeat, lateByMs: late ? now - lastBeat - heartbeatIntervalMs : null };
}

/** Whether a dependency blocks dispatch at `now` (down or rate-limited, and not yet past `until`). */
export function isDependencyUnavailable(dep: DependencyView, now: number): boolean {
  return dep.state !== 'up' && (dep.until === null || dep.until > now);
}

export function diagnose(input: DiagnosisInput): Diagnosis {
  const { task, now } = input;
  const reasons = reasonsFor(input).map((r) => ({ ...r, message: messageFor(task, r.code, r.details) }));
  const more =
    reasons.length > 1 ? ` (${reasons.length - 1} more reason${reasons.length > 2 ? 's' : ''} below)` : '';
  const summary = `Task ${task.id} is ${task.status}: ${reasons[0]?.message ?? 'no reason found'}${more}.`;
  const suggestions = [...new Set(reasons.flatMap((r) => suggestionsFor(task, r.code, r.details)))];
  return { taskId: task.id, status: task.status, summary, reasons, suggestions, at: now };
}

function reasonsFor(input: DiagnosisInput): DiagnosisReason[] {
  const { task, now } = input;
  switch (task.status) {
    case 'completed':
      return [
        reason('completed', task.finishedAt, {
          finishedAt: task.finishedAt,
          attempt: task.attempt,
          agentId: task.agentId,
          resultRef: task.resultRef?.key ?? null,
          via: input.lastEvent?.to === 'completed' ? input.lastEvent.reason : null,
        }),
      ];
    case 'cancelled':
      return [
        reason('cancelled', task.finishedAt, {
          finishedAt: task.finishedAt,
          reason: input.lastEvent?.to === 'cancelled' ? input.lastEvent.reason : null,
          actor: input.lastEvent?.to === 'cancelled' ? input.lastEvent.actor : null,
        }),
      ];
    case 'claimed':
      return [
        reason('claimed_not_started', task.claimedAt, {
          agentId: task.agentId,
          claimedAt: task.claimedAt,
          claimTimeoutMs: task.timing.claimTimeoutMs,
          leaseExpiresAt: task.leaseExpiresAt,
          expiresInMs: task.leaseExpiresAt === null ? null : task.leaseExpiresAt - now,
        }),
      ];
    case 'running':
      return runningReasons(input);
    case 'failed':
    case 'timeout':
      if (task.nextAttemptAt === null) return [finalReason(task)];
      if (task.nextAttemptAt > now) {
        const wait = reason('backoff_wait', task.finishedAt, {
          nextAttemptAt: task.nextAttemptAt,
          inMs: task.nextAttemptAt - now,
          attempt: task.attempt,
          maxAttempts: task.maxAttempts,
          lastError: task.error ? { code: task.error.code, message: task.error.message } : null,
        });
        return [wait, ...laterBlockers(input)];
      }
      return claimableReasons(input, task.nextAttemptAt);
    case 'created':
      if (task.runAt > now) {
        const later = reason('scheduled_later', task.createdAt, {
          runAt: task.runAt,
          inMs: task.runAt - now,
        });
        return [later, ...laterBlockers(input)];
      }
      return claimableReasons(input, task.runAt);
  }
}

function finalReason(task: Task): DiagnosisReason {
  const lastError = task.error ? { code: task.error.code, message: task.error.message } : null;
  if (task.error && task.error.retryable === false) {
    return reason('non_retryable_error', task.finishedAt, { error: lastError, attempt: task.attempt });
  }
  return reason('exhausted_attempts', task.finishedAt, {
    attempt: task.attempt,
    maxAttempts: task.maxAttempts,
    lastStatus: task.status,
    lastError,
  });
}

function runningReasons(input: DiagnosisInput): DiagnosisReason[] {
  const { task, now } = input;
  if (task.executionDone) {
    return [
      reason('awaiting_write_back', task.lastHeartbeatAt, {
        agentId: task.agentId,
        graceUntil: task.leaseExpiresAt,
        inMs: task.leaseExpiresAt === null ? null : task.leaseExpiresAt - now,
        writeBackGraceMs: input.writeBackGraceMs,
        hasUploadedResult: task.resultRef !== null,
      }),
    ];
  }
  const out: DiagnosisReason[] = [];
  const { heartbeatIntervalMs, heartbeatTimeoutMs, stallTimeoutMs } = task.timing;
  const { lastBeat, lateByMs } = heartbeatLateness(task, now);
  if (lateByMs !== null) {
    out.push(
      reason('heartbeat_late', lastBeat + heartbeatIntervalMs, {
        agentId: task.agentId,
        lastHeartbeatAt: task.lastHeartbeatAt,
        lateByMs,
        heartbeatIntervalMs,
        heartbeatTimeoutMs,
        leaseExpiresAt: task.leaseExpiresAt,
        expiresInMs: task.leaseExpiresAt === null ? null : task.leaseExpiresAt - now,
      }),
    );
  }
  const changedAt = task.progressChangedAt ?? task.startedAt ?? lastBeat;
  if (now - changedAt >= stallTimeoutMs) {
    out.push(
      reason('progress_stalled', changedAt, {
        agentId: task.agentId,
        progress: task.progress,
        phase: task.phase,
        unchangedForMs: now - changedAt,
        stallTimeoutMs,
      }),
    );
  }
  if (out.length > 0) return out;
  return [
    reason('running_normally', task.startedAt, {
      agentId: task.agentId,
      progress: task.progress,
      phase: task.phase,
      lastHeartbeatAt: task.lastHeartbeatAt,
      leaseExpiresAt: task.leaseExpiresAt,
    }),
  ];
}

/** A task that could be claimed now: what (if anything) stands in the way. */
function claimableReasons(input: DiagnosisInput, claimableSince: number): DiagnosisReason[] {
  const out = [...dependencyReasons(input), ...agentReasons(input, true)];
  if (input.queueAhead > 0) {
    out.push(reason('queued_behind', claimableSince, { ahead: input.queueAhead, type: input.task.type }));
  }
  if (out.length === 0) out.push(reason('claimable_now', claimableSince, { type: input.task.type }));
  return out;
}

/** For a task that becomes claimable later: blockers that will still stand then. */
function laterBlockers(input: DiagnosisInput): DiagnosisReason[] {
  return [...dependencyReasons(input), ...agentReasons(input, false)];
}

function dependencyReasons(input: DiagnosisInput): DiagnosisReason[] {
  const out: DiagnosisReason[] = [];
  for (const name of input.task.requires) {
    const dep = input.dependencies.get(name);
    if (dep === undefined || !isDependencyUnavailable(dep, input.now)) continue;
    out.push(
      reason('dependency_unavailable', dep.since, {
        name,
        state: dep.state,
        until: dep.until,
        reportedBy: dep.reportedBy,
      }),
    );
  }
  return out;
}

function agentReasons(input: DiagnosisInput, claimable: boolean): DiagnosisReason[] {
  const { now, task } = input;
  const live = input.agents.filter((a) => !INACTIVE_AGENT_STATUSES.includes(a.status));
  if (live.length === 0) {
    const lost = input.agents.filter((a) => a.status === 'lost');
    if (lost.length > 0) {
      const stopped = (a: DiagnosisAgent) => a.lastHeartbeatAt ?? a.startedAt ?? null;
      const latest = lost.reduce<number | null>((m, a) => {
        const s = stopped(a);
        return s !== null && (m === null || s > m) ? s : m;
      }, null);
      return [
        reason('agents_lost', latest, {
          type: task.type,
          agents: lost.map((a) => {
            const s = stopped(a);
            return {
              id: a.id,
              lastHeartbeatAt: a.lastHeartbeatAt ?? null,
              stoppedForMs: s === null ? null : now - s,
            };
          }),
        }),
      ];
    }
    return [reason('no_agents_for_type', null, { type: task.type, registeredAgents: input.agents.length })];
  }
  if (!claimable) return [];
  const polling = live.filter(
    (a) => a.waiting === true || (a.lastPollAt !== null && now - a.lastPollAt <= input.pollStaleAfterMs),
  );
  if (polling.length === 0) {
    const lastPollAt = live.reduce<number | null>(
      (max, a) => (a.lastPollAt !== null && (max === null || a.lastPollAt > max) ? a.lastPollAt : max),
      null,
    );
    return [
      reason('agents_not_polling', lastPollAt, {
        type: task.type,
        agents: live.length,
        lastPollAt,
        sinceLastPollMs: lastPollAt === null ? null : now - lastPollAt,
        pollStaleAfterMs: input.pollStaleAfterMs,
      }),
    ];
  }
  if (polling.every((a) => a.waiting !== true && a.currentTaskIds.length > 0)) {
    return [
      reason('agents_busy', null, {
        type: task.type,
        agents: polling.length,
        heldTasks: polling.reduce((n, a) => n + a.currentTaskIds.length, 0),
      }),
    ];
  }
  return [];
}

function reason(code: DiagnosisCode, since: number | null, details: JsonObject): DiagnosisReason {
  return { code, message: '', since, details };
}
