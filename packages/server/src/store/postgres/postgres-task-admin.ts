/**
 * Task writes made by the coordinator or an operator: create, lease expiry, completion from an
 * uploaded result, cancel, manual retry, graceful agent leave. One statement each (create: a lookup of
 * idempotency keys, then one insert).
 */
import type { TaskStatus } from '@rouse/protocol';
import { IdempotencyConflictError, RouseError } from '../../core/errors.js';
import { canTransition, TRANSITIONS } from '../../core/transitions.js';
import { canonicalJson } from '../canonical-json.js';
import type {
  CreatedTask,
  ExpireInput,
  ExpiryReason,
  NewTask,
  ReleaseAgentTasksInput,
  Transitioned,
} from '../store.js';
import { agentActor, createdTask, releasedTaskError } from '../write-rules.js';
import { ADMIN_SQL } from './admin-statements.js';
import { type PgContext, type PgStatements, transitioned } from './postgres-context.js';
import { pgJson, type TaskRow, toTask, type WrittenRow } from './row-mapping.js';
import { insertRow } from './task-inserts.js';
import { TASK_SQL } from './task-statements.js';

/** The words of each expiry error (the same as SQLite's). */
const EXPIRY_MESSAGES: Record<ExpiryReason, string> = {
  claim_timeout: 'claimed but not started within claimTimeoutMs',
  heartbeat_timeout: 'no heartbeat within heartbeatTimeoutMs',
  attempt_deadline: 'the attempt ran past attemptDeadlineMs',
};
const EXPIRY_MESSAGES_JSON = JSON.stringify(EXPIRY_MESSAGES);

/** The statuses the transition table lets go to `cancelled` (final ones are refused in SQL too). */
const CANCELLABLE = (Object.keys(TRANSITIONS) as TaskStatus[]).filter((s) => canTransition(s, 'cancelled'));

/** The unique index of idempotency keys (0001_init.sql): a violation of it is a create race. */
const IDEMPOTENCY_CONSTRAINT = 'tasks_idempotency_key';

/** What the insert returns of each new task: the times the database's clock chose. */
interface InsertedRow {
  id: string;
  created_at: number;
  run_at: number;
}

type Planned =
  | { kind: 'insert'; id: string }
  | { kind: 'existing'; row: TaskRow }
  | { kind: 'batch'; id: string };

interface KnownKey {
  id: string;
  type: string;
  payload: string;
  row: TaskRow | null;
}

async function createOnce(ctx: PgContext, tasks: NewTask[]): Promise<CreatedTask[]> {
  const keys = [...new Set(tasks.flatMap((t) => (t.idempotencyKey === null ? [] : [t.idempotencyKey])))];
  const existing =
    keys.length === 0
      ? []
      : await ctx.rows<TaskRow>('selectTasksByIdempotencyKeys', TASK_SQL.selectTasksByIdempotencyKeys, [
          keys,
        ]);
  const known = new Map<string, KnownKey>(
    existing.map((row) => [
      row.idempotency_key!,
      { id: row.id, type: row.type, payload: canonicalJson(row.payload), row },
    ]),
  );
  const plan: Planned[] = [];
  const inserts: NewTask[] = [];
  for (const t of tasks) {
    if (t.idempotencyKey !== null) {
      const payload = canonicalJson(t.payload);
      const k = known.get(t.idempotencyKey);
      if (k !== undefined) {
        if (k.type !== t.type || k.payload !== payload)
          throw new IdempotencyConflictError(t.idempotencyKey, k.id);
        plan.push(k.row === null ? { kind: 'batch', id: k.id } : { kind: 'existing', row: k.row });
        continue;
      }
      known.set(t.idempotencyKey, { id: t.id, type: t.type, payload, row: null });
    }
    plan.push({ kind: 'insert', id: t.id });
    inserts.push(t);
  }
  const batch = inserts.map(insertRow);
  const rows = await insertBatch(ctx, batch);
  // The database chose only the times; the rest of each task is what was written.
  const written = new Map(inserts.map((t) => [t.id, t]));
  const created = new Map(rows.map((r) => [r.id, createdTask(written.get(r.id)!, r.created_at, r.run_at)]));
  return plan.map((p) => {
    if (p.kind === 'existing') return { task: toTask(p.row), deduplicated: true };
    return { task: created.get(p.id)!, deduplicated: p.kind === 'batch' };
  });
}

/**
 * Rows per INSERT statement of a batched create. A statement's working memory (the batch's JSON, its
 * records, the RETURNING rows) grows with its rows, and a backend's heap keeps its high-water mark for
 * as long as the connection lives: 1,000 rows in one statement left each pooled connection that ran
 * one about 9 MB larger, for good. At 250 rows a statement the connections stay within about a MB of
 * those that never insert, and the extra round trips cost nothing measurable (docs/performance-journal.md).
 */
const INSERT_STATEMENT_ROWS = 250;

/** The batch's rows, in statements of at most `INSERT_STATEMENT_ROWS`, in one transaction when several. */
async function insertBatch(ctx: PgContext, batch: unknown[][]): Promise<InsertedRow[]> {
  if (batch.length === 0) return [];
  const now = ctx.now();
  const insert = (s: PgStatements, rows: unknown[][]) =>
    s.rows<InsertedRow>('insertTasks', TASK_SQL.insertTasks, [now, pgJson(rows)]);
  if (batch.length <= INSERT_STATEMENT_ROWS) return insert(ctx, batch);
  return ctx.transaction(async (tx) => {
    const out: InsertedRow[] = [];
    for (let i = 0; i < batch.length; i += INSERT_STATEMENT_ROWS) {
      out.push(...(await insert(tx, batch.slice(i, i + INSERT_STATEMENT_ROWS))));
    }
    return out;
  });
}

/**
 * All or nothing: one INSERT statement, or one transaction of several for a large batch. A key another
 * coordinator inserted between the lookup and the insert fails the insert on its unique index; the
 * whole create then runs again and finds it.
 */
export async function createTasks(ctx: PgContext, tasks: NewTask[]): Promise<CreatedTask[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await createOnce(ctx, tasks);
    } catch (err) {
      const raced =
        err instanceof RouseError &&
        err.code === 'conflict' &&
        err.details.constraint === IDEMPOTENCY_CONSTRAINT;
      if (!raced || attempt >= 3) throw err;
    }
  }
}

export async function expireLease(
  ctx: PgContext,
  input: ExpireInput,
): Promise<(Transitioned & { reason: ExpiryReason }) | null> {
  const [row] = await ctx.rows<WrittenRow & { reason: ExpiryReason }>('expireLease', ADMIN_SQL.expireLease, [
    ctx.now(),
    input.taskId,
    input.version,
    input.backoff.baseMs,
    input.backoff.capMs,
    input.backoff.jitter,
    EXPIRY_MESSAGES_JSON,
  ]);
  return row === undefined ? null : { ...transitioned(row), reason: row.reason };
}

export async function completeFromResultRef(
  ctx: PgContext,
  input: { taskId: string; version: number },
): Promise<Transitioned | null> {
  const [row] = await ctx.rows<WrittenRow>('completeFromResultRef', ADMIN_SQL.completeFromResultRef, [
    ctx.now(),
    input.taskId,
    input.version,
  ]);
  return row === undefined ? null : transitioned(row);
}

export async function cancelTask(
  ctx: PgContext,
  input: { taskId: string; reason: string; actor: string },
): Promise<Transitioned> {
  const [row] = await ctx.rows<WrittenRow>('cancelTask', ADMIN_SQL.cancelTask, [
    ctx.now(),
    input.taskId,
    CANCELLABLE,
    input.actor,
    input.reason,
  ]);
  if (row === undefined)
    throw await ctx.refused({ kind: 'transition', to: 'cancelled', taskId: input.taskId });
  return transitioned(row);
}

/**
 * A manual retry keeps the status (failed or timeout) and makes it claimable now; the next claim is
 * the transition. Its history entry is an annotation with `from` = `to`.
 */
export async function retryTask(
  ctx: PgContext,
  input: { taskId: string; actor: string },
): Promise<Transitioned> {
  const [row] = await ctx.rows<WrittenRow>('retryTask', ADMIN_SQL.retryTask, [
    ctx.now(),
    input.taskId,
    input.actor,
  ]);
  if (row === undefined) throw await ctx.refused({ kind: 'retry', taskId: input.taskId });
  return transitioned(row);
}

export async function releaseAgentTasks(
  ctx: PgContext,
  input: ReleaseAgentTasksInput,
): Promise<Transitioned[]> {
  const error = releasedTaskError(input);
  const rows = await ctx.rows<WrittenRow>('releaseAgentTasks', ADMIN_SQL.releaseAgentTasks, [
    ctx.now(),
    input.agentId,
    pgJson(error),
    input.reason,
    input.actor ?? agentActor(input.agentId),
    input.task?.id ?? null,
    input.task?.version ?? null,
  ]);
  return rows.map(transitioned);
}
