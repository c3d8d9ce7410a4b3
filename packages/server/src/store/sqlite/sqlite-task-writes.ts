/**
 * Task writes made by the holding agent: claim, start, heartbeats, checkpoint, logs, result ref,
 * complete, fail. Each runs inside the caller's write transaction (see sqlite-store.ts).
 */
import {
  COORDINATOR_LOG_STREAM,
  type Json,
  type JsonObject,
  type Task,
  type TaskEvent,
  type TaskStatus,
} from '@rouse/protocol';
import { leaseDeadline } from '../../core/timing.js';
import { assertTransition } from '../../core/transitions.js';
import type {
  AgentWrite,
  ClaimInput,
  CompleteAndClaimItem,
  CompleteAndClaimResult,
  CompleteInput,
  FailInput,
  HeartbeatAccepted,
  HeartbeatInput,
  LogAppendResult,
  Outcome,
  Store,
  Transitioned,
} from '../store.js';
import { type AttemptedWrite, checkWrite, failedOutcome, writeError } from '../write-errors.js';
import {
  agentActor,
  claimLeaseExpiresAt,
  claimStartedRow,
  heartbeatLeaseExpiresAt,
  logCapNotice,
  nextAttemptAt,
} from '../write-rules.js';
import { EventRows } from './event-rows.js';
import {
  claimedTask,
  type HeadRow,
  headTiming,
  jsonText,
  rowEventCount,
  rowField,
  rowTiming,
  type TaskRow,
  toHead,
} from './row-mapping.js';
import type { SqliteContext } from './sqlite-context.js';

type SaveCheckpointInput = Parameters<Store['saveCheckpoint']>[0];
type AppendLogsInput = Parameters<Store['appendLogs']>[0];
type SetResultRefInput = Parameters<Store['setResultRef']>[0];

function held(input: AgentWrite): AttemptedWrite {
  return { kind: 'hold', taskId: input.taskId, version: input.version, agentId: input.agentId };
}

/** The head, after checking `write` against it; throws the write's error. */
function checkedHead(ctx: SqliteContext, write: AttemptedWrite): HeadRow {
  const head = ctx.head(write.taskId);
  const err = checkWrite(toHead(head), write);
  if (err !== null || head === undefined) throw err;
  return head;
}

/** A claim's history entry (fields in TaskEvent order: one object shape for every entry). */
function claimEvent(
  task: Task,
  seq: number,
  at: number,
  from: TaskStatus,
  to: 'claimed' | 'running',
  actor: string,
): TaskEvent {
  const reason = to === 'claimed' ? 'claimed' : 'started';
  return { seq, at, from, to, version: task.version, attempt: task.attempt, actor, reason, details: null };
}

export function claimTasks(ctx: SqliteContext, input: ClaimInput): Transitioned[] {
  const max = Math.floor(input.max);
  if (max < 1 || input.types.length === 0) return [];
  const now = ctx.clock.now();
  const unavailable = JSON.stringify(input.unavailableDependencies ?? []);
  const types = [...new Set(input.types)];
  let candidates: TaskRow[] = [];
  for (const type of types) {
    candidates.push(...(ctx.tasks.selectClaimCandidates.all({ type, now, unavailable, max }) as TaskRow[]));
  }
  if (types.length > 1) {
    candidates = candidates
      .sort((a, b) => rowField.priority(b) - rowField.priority(a) || rowField.seq(a) - rowField.seq(b))
      .slice(0, max);
  }
  const actor = agentActor(input.agentId);
  const status = input.start ? 'running' : 'claimed';
  const startedAt = input.start ? now : null;
  const events = new EventRows(ctx.db);
  const out: Transitioned[] = [];
  for (const row of candidates) {
    const id = rowField.id(row);
    const from = rowField.status(row);
    assertTransition(id, from, 'claimed');
    if (input.start) assertTransition(id, 'claimed', 'running');
    const timing = rowTiming(row);
    const leaseExpiresAt = claimLeaseExpiresAt(now, timing, input.start);
    const { changes } = ctx.tasks.claimTask.run({
      seq: rowField.seq(row),
      version: rowField.version(row),
      from,
      now,
      status,
      startedAt,
      agentId: input.agentId,
      leaseExpiresAt,
      events: input.start ? 2 : 1,
    });
    if (changes === 0) continue; // another connection took it since the read
    const task = claimedTask(row, { status, agentId: input.agentId, now, startedAt, leaseExpiresAt, timing });
    const eventCount = rowEventCount(row);
    const claimed = claimEvent(task, eventCount + 1, now, from, 'claimed', actor);
    if (input.start) {
      // The claim and its start, stored as one row (see claimStartedRow).
      events.add(id, claimStartedRow(claimed));
      out.push({
        task,
        events: [claimed, claimEvent(task, eventCount + 2, now, 'claimed', 'running', actor)],
      });
    } else {
      out.push({ task, events: [events.add(id, claimed)] });
    }
  }
  events.flush();
  return out;
}

export function startTask(ctx: SqliteContext, input: AgentWrite): Transitioned {
  const write: AttemptedWrite = { kind: 'transition', to: 'running', ...input };
  const head = checkedHead(ctx, write);
  const now = ctx.clock.now();
  const { changes } = ctx.tasks.startTask.run({
    id: input.taskId,
    version: input.version,
    agentId: input.agentId,
    now,
    leaseExpiresAt: leaseDeadline('start', now, headTiming(head), now),
  });
  if (changes === 0) throw ctx.refused(write);
  return ctx.transitioned(ctx.written(head.seq), 'claimed', now, agentActor(input.agentId), 'started');
}

function recordHeartbeat(ctx: SqliteContext, beat: HeartbeatInput, now: number): Outcome<HeartbeatAccepted> {
  const write = held(beat);
  const head = ctx.head(beat.taskId);
  const err = checkWrite(toHead(head), write);
  if (err !== null || head === undefined) return failedOutcome(err);
  const progress = beat.progress ?? head.progress;
  const phase = beat.phase ?? head.phase;
  const executionDone = beat.executionDone ?? head.execution_done === 1;
  const progressed = progress !== head.progress || phase !== head.phase;
  const timing = headTiming(head);
  const leaseExpiresAt = heartbeatLeaseExpiresAt({
    status: head.status,
    // A held task always has a lease (schema invariant).
    leaseExpiresAt: head.lease_expires_at ?? now,
    startedAt: head.started_at,
    timing,
    executionDone,
    wasExecutionDone: head.execution_done === 1,
    now,
    writeBackGraceMs: beat.writeBackGraceMs,
  });
  const { changes } = ctx.tasks.heartbeatTask.run({
    id: beat.taskId,
    version: beat.version,
    status: head.status,
    now,
    leaseExpiresAt,
    progress,
    phase,
    executionDone: executionDone ? 1 : 0,
    progressed: progressed ? 1 : 0,
  });
  if (changes === 0) return failedOutcome(ctx.refused(write));
  return {
    ok: true,
    value: {
      taskId: beat.taskId,
      leaseExpiresAt,
      progressed,
      status: head.status,
      progressChangedAt: progressed ? now : head.progress_changed_at,
      stallTimeoutMs: timing.stallTimeoutMs,
      requires: JSON.parse(head.requires) as string[],
    },
  };
}

export function recordHeartbeats(ctx: SqliteContext, beats: HeartbeatInput[]): Outcome<HeartbeatAccepted>[] {
  const now = ctx.clock.now();
  return beats.map((beat) => recordHeartbeat(ctx, beat, now));
}

export function saveCheckpoint(ctx: SqliteContext, input: SaveCheckpointInput): void {
  const { changes } = ctx.tasks.saveCheckpoint.run({
    id: input.taskId,
    version: input.version,
    agentId: input.agentId,
    setState: input.state === undefined ? 0 : 1,
    state: jsonText(input.state),
    setSession: input.session === undefined ? 0 : 1,
    session: jsonText(input.session),
  });
  if (changes === 0) throw ctx.refused(held(input));
}

export function appendLogs(ctx: SqliteContext, input: AppendLogsInput): LogAppendResult {
  const head = checkedHead(ctx, held(input));
  const now = ctx.clock.now();
  let seq = (ctx.tasks.selectLastLogSeq.get({ taskId: input.taskId }) as { seq: number }).seq;
  const insert = (stream: string, text: string): void => {
    seq += 1;
    ctx.tasks.insertLog.run({ taskId: input.taskId, seq, attempt: head.attempt, at: now, stream, text });
  };
  let used = head.log_bytes;
  let accepted = 0;
  let truncated = false;
  for (const line of input.lines) {
    const size = Buffer.byteLength(line.text, 'utf8');
    if (used + size > input.maxBytesPerTask) {
      truncated = true;
      break;
    }
    insert(line.stream, line.text);
    used += size;
    accepted += 1;
  }
  if (truncated && used <= input.maxBytesPerTask) {
    // Once: the line that says so, where it happened; the byte count then passes the cap.
    const text = logCapNotice(input.maxBytesPerTask);
    insert(COORDINATOR_LOG_STREAM, text);
    used = Math.max(used + Buffer.byteLength(text, 'utf8'), input.maxBytesPerTask + 1);
  }
  if (used > head.log_bytes) {
    ctx.tasks.addLogBytes.run({ id: input.taskId, version: input.version, bytes: used - head.log_bytes });
  }
  return { accepted, truncated };
}

export function setResultRef(ctx: SqliteContext, input: SetResultRefInput): void {
  const { changes } = ctx.tasks.setResultRef.run({
    id: input.taskId,
    version: input.version,
    agentId: input.agentId,
    resultRef: JSON.stringify(input.resultRef),
  });
  if (changes === 0) throw ctx.refused(held(input));
}

function completeTask(
  ctx: SqliteContext,
  item: CompleteInput,
  now: number,
  events: EventRows,
): Outcome<Transitioned> {
  const { changes } = ctx.tasks.completeTask.run({
    id: item.taskId,
    version: item.version,
    agentId: item.agentId,
    now,
    result: jsonText(item.result),
    setResultRef: item.resultRef === undefined ? 0 : 1,
    resultRef: jsonText(item.resultRef),
  });
  if (changes === 1) {
    const { task, eventCount } = ctx.writtenById(item.taskId);
    const event = events.add(task.id, {
      seq: eventCount,
      at: now,
      from: 'running',
      to: 'completed',
      version: task.version,
      attempt: task.attempt,
      actor: agentActor(item.agentId),
      reason: 'completed',
      details: null,
    });
    return { ok: true, value: { task, events: [event] } };
  }
  const head = toHead(ctx.head(item.taskId));
  if (head?.status === 'completed' && head.version === item.version && head.agentId === item.agentId) {
    return { ok: true, value: { task: ctx.task(item.taskId)!, events: [] } };
  }
  return failedOutcome(writeError(head, { kind: 'transition', to: 'completed', ...item }));
}

export function completeTasks(ctx: SqliteContext, items: CompleteInput[]): Outcome<Transitioned>[] {
  const now = ctx.clock.now();
  // History rows of the whole batch go in one statement (same transaction as the updates).
  const events = new EventRows(ctx.db);
  const out = items.map((item) => completeTask(ctx, item, now, events));
  events.flush();
  return out;
}

export function completeAndClaim(
  ctx: SqliteContext,
  complete: CompleteInput[],
  claim: ClaimInput,
): CompleteAndClaimResult {
  return { completed: completeTasks(ctx, complete), claimed: claimTasks(ctx, claim) };
}

export function completeAndClaimMany(
  ctx: SqliteContext,
  items: CompleteAndClaimItem[],
): CompleteAndClaimResult[] {
  return items.map((item) => completeAndClaim(ctx, item.complete, item.claim));
}

export function failTask(ctx: SqliteContext, input: FailInput): Transitioned {
  const write: AttemptedWrite = {
    kind: 'transition',
    to: 'failed',
    taskId: input.taskId,
    version: input.version,
    agentId: input.agentId,
  };
  const current = ctx.head(input.taskId);
  if (
    current?.status === 'failed' &&
    current.version === input.version &&
    current.agent_id === input.agentId
  ) {
    return { task: ctx.task(input.taskId)!, events: [] };
  }
  const head = checkedHead(ctx, write);
  const now = ctx.clock.now();
  const backoff = headTiming(head).backoff ?? input.backoff;
  const next = nextAttemptAt(head.attempt, head.max_attempts, input.error.retryable, now, backoff);
  const { changes } = ctx.tasks.failTask.run({
    id: input.taskId,
    version: input.version,
    agentId: input.agentId,
    error: JSON.stringify(input.error),
    nextAttemptAt: next,
    finishedAt: next === null ? now : null,
  });
  if (changes === 0) throw ctx.refused(write);
  const details: JsonObject = { error: input.error as unknown as Json, nextAttemptAt: next };
  return ctx.transitioned(
    ctx.written(head.seq),
    'running',
    now,
    agentActor(input.agentId),
    'failed',
    details,
  );
}
