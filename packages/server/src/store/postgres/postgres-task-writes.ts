/**
 * Task writes made by the holding agent: claim, start, heartbeats, checkpoint, logs, result ref,
 * complete, fail. Each is one conditional statement; when it changes nothing the task's head is read
 * and `write-errors.ts` says why, exactly as on SQLite.
 */
import { COORDINATOR_LOG_STREAM, type Task, type TaskEvent, type TaskStatus } from '@rouse/protocol';
import type {
  AgentWrite,
  ClaimInput,
  CompleteInput,
  FailInput,
  HeartbeatAccepted,
  HeartbeatInput,
  LogAppendResult,
  Outcome,
  Store,
  Transitioned,
} from '../store.js';
import { type AttemptedWrite, failedOutcome, writeError } from '../write-errors.js';
import { agentActor, logCapNotice } from '../write-rules.js';
import { byTask, type PgContext, rounds, transitioned } from './postgres-context.js';
import {
  EVENT_COUNT_COLUMN,
  jsonParam,
  pgJson,
  pgText,
  TASK_COLUMN_COUNT,
  type TaskRow,
  toHead,
  toTask,
  toTaskFromArray,
  type WrittenRow,
} from './row-mapping.js';
import { TASK_SQL } from './task-statements.js';

type SaveCheckpointInput = Parameters<Store['saveCheckpoint']>[0];
type AppendLogsInput = Parameters<Store['appendLogs']>[0];
type SetResultRefInput = Parameters<Store['setResultRef']>[0];

/**
 * A history entry rebuilt from what the claim and completion statements return: per row, one JSON
 * array `r` of the task columns, the statement's time `at` and (claims) the status the attempt came
 * from — all their history entries are made of (see task-statements.ts).
 */
function entry(
  task: Task,
  at: number,
  seq: number,
  from: TaskStatus | null,
  to: TaskStatus,
  actor: string,
  reason: string,
): TaskEvent {
  return { seq, at, from, to, version: task.version, attempt: task.attempt, actor, reason, details: null };
}

/** A claimed row's array `r` with the entries its statement appended: claimed (seq − 1 with start), started. */
function claimedTransition(r: unknown[], start: boolean, actor: string): Transitioned {
  const task = toTaskFromArray(r);
  const n = r[EVENT_COUNT_COLUMN] as number;
  const at = r[TASK_COLUMN_COUNT] as number;
  const from = r[TASK_COLUMN_COUNT + 1] as TaskStatus | null;
  const events = start
    ? [
        entry(task, at, n - 1, from, 'claimed', actor, 'claimed'),
        entry(task, at, n, 'claimed', 'running', actor, 'started'),
      ]
    : [entry(task, at, n, from, 'claimed', actor, 'claimed')];
  return { task, events };
}

/** A completed row's array `r` with the entry its statement appended. */
function completedTransition(r: unknown[], actor: string): Transitioned {
  const task = toTaskFromArray(r);
  const at = r[TASK_COLUMN_COUNT] as number;
  return {
    task,
    events: [entry(task, at, r[EVENT_COUNT_COLUMN] as number, 'running', 'completed', actor, 'completed')],
  };
}

function held(input: AgentWrite): AttemptedWrite {
  return { kind: 'hold', taskId: input.taskId, version: input.version, agentId: input.agentId };
}

export async function claimTasks(ctx: PgContext, input: ClaimInput): Promise<Transitioned[]> {
  const max = Math.floor(input.max);
  if (max < 1 || input.types.length === 0) return [];
  const actor = agentActor(input.agentId);
  const rows = await ctx.arrays('claimTasks', TASK_SQL.claimTasks, [
    ctx.now(),
    [...new Set(input.types)],
    max,
    input.agentId,
    input.unavailableDependencies ?? [],
    input.start,
    actor,
  ]);
  return rows.map((row) => claimedTransition(row[0] as unknown[], input.start, actor));
}

export async function startTask(ctx: PgContext, input: AgentWrite): Promise<Transitioned> {
  const [row] = await ctx.rows<WrittenRow>('startTask', TASK_SQL.startTask, [
    ctx.now(),
    input.taskId,
    input.version,
    input.agentId,
    agentActor(input.agentId),
  ]);
  if (row === undefined) throw await ctx.refused({ kind: 'transition', to: 'running', ...input });
  return transitioned(row);
}

interface BeatRow {
  i: number;
  id: string;
  lease_expires_at: number;
  progressed: boolean;
  status: HeartbeatAccepted['status'];
  progress_changed_at: number | null;
  stall_timeout_ms: number;
  requires: string[];
}

export async function recordHeartbeats(
  ctx: PgContext,
  beats: HeartbeatInput[],
): Promise<Outcome<HeartbeatAccepted>[]> {
  const out: Outcome<HeartbeatAccepted>[] = new Array(beats.length);
  for (const round of rounds(beats, byTask)) {
    const items = round.map(({ item, index }) => ({
      i: index,
      id: item.taskId,
      agent_id: item.agentId,
      version: item.version,
      progress: item.progress ?? null,
      phase: item.phase ?? null,
      execution_done: item.executionDone ?? null,
      grace_ms: item.writeBackGraceMs,
    }));
    const rows = await ctx.rows<BeatRow>('recordHeartbeats', TASK_SQL.recordHeartbeats, [
      ctx.now(),
      pgJson(items),
      items.map((b) => b.id),
    ]);
    for (const r of rows) {
      out[r.i] = {
        ok: true,
        value: {
          taskId: r.id,
          leaseExpiresAt: r.lease_expires_at,
          progressed: r.progressed,
          status: r.status,
          progressChangedAt: r.progress_changed_at,
          stallTimeoutMs: r.stall_timeout_ms,
          requires: r.requires,
        },
      };
    }
    const refused = round.filter(({ index }) => out[index] === undefined);
    if (refused.length === 0) continue;
    const heads = await ctx.heads(refused.map(({ item }) => item.taskId));
    for (const { item, index } of refused) {
      out[index] = failedOutcome(writeError(toHead(heads.get(item.taskId)), held(item)));
    }
  }
  return out;
}

export async function saveCheckpoint(ctx: PgContext, input: SaveCheckpointInput): Promise<void> {
  const changes = await ctx.changes('saveCheckpoint', TASK_SQL.saveCheckpoint, [
    input.taskId,
    input.version,
    input.agentId,
    input.state !== undefined,
    jsonParam(input.state),
    input.session !== undefined,
    jsonParam(input.session),
  ]);
  if (changes === 0) throw await ctx.refused(held(input));
}

export async function appendLogs(ctx: PgContext, input: AppendLogsInput): Promise<LogAppendResult> {
  const texts = input.lines.map((l) => pgText(l.text));
  const [r] = await ctx.rows<{ held: number; accepted: number; total: number }>(
    'appendLogs',
    TASK_SQL.appendLogs,
    [
      ctx.now(),
      input.taskId,
      input.version,
      input.agentId,
      input.lines.map((l) => l.stream),
      texts,
      texts.map((t) => Buffer.byteLength(t, 'utf8')),
      input.maxBytesPerTask,
    ],
  );
  if (r === undefined || r.held === 0) throw await ctx.refused(held(input));
  const truncated = r.accepted < r.total;
  if (truncated) {
    const text = logCapNotice(input.maxBytesPerTask);
    await ctx.changes('appendLogCapNotice', TASK_SQL.appendLogCapNotice, [
      ctx.now(),
      input.taskId,
      input.version,
      input.agentId,
      input.maxBytesPerTask,
      Buffer.byteLength(text, 'utf8'),
      COORDINATOR_LOG_STREAM,
      text,
    ]);
  }
  return { accepted: r.accepted, truncated };
}

export async function setResultRef(ctx: PgContext, input: SetResultRefInput): Promise<void> {
  const changes = await ctx.changes('setResultRef', TASK_SQL.setResultRef, [
    input.taskId,
    input.version,
    input.agentId,
    pgJson(input.resultRef),
  ]);
  if (changes === 0) throw await ctx.refused(held(input));
}

/**
 * The completion statements' parameters for a round: parallel arrays, one element per item (see
 * `completeCtes` in task-statements.ts).
 */
function completionParams(round: { item: CompleteInput; index: number }[]): unknown[] {
  const n = round.length;
  const i = new Array<number>(n);
  const ids = new Array<string>(n);
  const agentIds = new Array<string>(n);
  const versions = new Array<number>(n);
  const actors = new Array<string>(n);
  const results = new Array<string | null>(n);
  const setRefs = new Array<boolean>(n);
  const resultRefs = new Array<string | null>(n);
  for (let k = 0; k < n; k++) {
    const { item, index } = round[k]!;
    i[k] = index;
    ids[k] = item.taskId;
    agentIds[k] = item.agentId;
    versions[k] = item.version;
    actors[k] = agentActor(item.agentId);
    results[k] = jsonParam(item.result);
    setRefs[k] = item.resultRef !== undefined;
    resultRefs[k] = jsonParam(item.resultRef);
  }
  return [i, ids, agentIds, versions, actors, results, setRefs, resultRefs];
}

/** Fill in the outcomes of the items a completion statement did not write (one read for all). */
async function explainRefusedCompletions(
  ctx: PgContext,
  round: { item: CompleteInput; index: number }[],
  out: Outcome<Transitioned>[],
): Promise<void> {
  const refused = round.filter(({ index }) => out[index] === undefined);
  if (refused.length === 0) return;
  const tasks = await ctx.rows<TaskRow>('selectTasks', TASK_SQL.selectTasks, [
    refused.map((r) => r.item.taskId),
  ]);
  const byId = new Map(tasks.map((t) => [t.id, t]));
  for (const { item, index } of refused) {
    const row = byId.get(item.taskId);
    // Idempotent per version: completing what this holder already completed returns it unchanged.
    if (row?.status === 'completed' && row.version === item.version && row.agent_id === item.agentId) {
      out[index] = { ok: true, value: { task: toTask(row), events: [] } };
    } else {
      out[index] = failedOutcome(writeError(toHead(row), { kind: 'transition', to: 'completed', ...item }));
    }
  }
}

export async function completeTasks(
  ctx: PgContext,
  items: CompleteInput[],
): Promise<Outcome<Transitioned>[]> {
  const out: Outcome<Transitioned>[] = new Array(items.length);
  for (const round of rounds(items, byTask)) {
    // Rows: i, r.
    const rows = await ctx.arrays('completeTasks', TASK_SQL.completeTasks, [
      ctx.now(),
      ...completionParams(round),
    ]);
    for (const row of rows) {
      const i = row[0] as number;
      out[i] = { ok: true, value: completedTransition(row[1] as unknown[], agentActor(items[i]!.agentId)) };
    }
    await explainRefusedCompletions(ctx, round, out);
  }
  return out;
}

/**
 * completeTasks then claimTasks in one statement (one commit). A batch naming a task twice takes the
 * two calls instead: a statement cannot write a row twice.
 */
export async function completeAndClaim(
  ctx: PgContext,
  complete: CompleteInput[],
  claim: ClaimInput,
): Promise<{ completed: Outcome<Transitioned>[]; claimed: Transitioned[] }> {
  const [round, ...more] = rounds(complete, byTask);
  const max = Math.floor(claim.max);
  if (more.length > 0 || round === undefined || max < 1 || claim.types.length === 0) {
    const completed = await completeTasks(ctx, complete);
    return { completed, claimed: await claimTasks(ctx, claim) };
  }
  const actor = agentActor(claim.agentId);
  // Rows: part ('completed' | 'claimed'), i (completions), r.
  const rows = await ctx.arrays('completeAndClaim', TASK_SQL.completeAndClaim, [
    ctx.now(),
    ...completionParams(round),
    [...new Set(claim.types)],
    max,
    claim.agentId,
    claim.unavailableDependencies ?? [],
    claim.start,
    actor,
  ]);
  const completed: Outcome<Transitioned>[] = new Array(complete.length);
  const claimed: Transitioned[] = [];
  for (const row of rows) {
    const r = row[2] as unknown[];
    if (row[0] === 'completed') {
      const i = row[1] as number;
      completed[i] = { ok: true, value: completedTransition(r, agentActor(complete[i]!.agentId)) };
    } else claimed.push(claimedTransition(r, claim.start, actor));
  }
  await explainRefusedCompletions(ctx, round, completed);
  return { completed, claimed };
}

export async function failTask(ctx: PgContext, input: FailInput): Promise<Transitioned> {
  const [row] = await ctx.rows<WrittenRow>('failTask', TASK_SQL.failTask, [
    ctx.now(),
    input.taskId,
    input.version,
    input.agentId,
    input.error.retryable,
    input.backoff.baseMs,
    input.backoff.capMs,
    input.backoff.jitter,
    pgJson(input.error),
    agentActor(input.agentId),
  ]);
  if (row !== undefined) return transitioned(row);
  const [current] = await ctx.rows<TaskRow>('selectTask', TASK_SQL.selectTask, [input.taskId]);
  // Idempotent per version: failing what this holder already failed returns it unchanged.
  if (
    current?.status === 'failed' &&
    current.version === input.version &&
    current.agent_id === input.agentId
  ) {
    return { task: toTask(current), events: [] };
  }
  throw writeError(toHead(current), {
    kind: 'transition',
    to: 'failed',
    taskId: input.taskId,
    version: input.version,
    agentId: input.agentId,
  });
}
