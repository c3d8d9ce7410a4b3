/**
 * How new tasks reach PostgreSQL: one INSERT of a batch sent as a JSON array with one array of values
 * per task. Arrays instead of objects leave the key names out: 40 % fewer bytes to build, send and
 * parse per task (PostgreSQL's CPU per created task 0.62 ×, docs/performance-journal.md).
 */
import { shardOf } from '../lease-shards.js';
import type { NewTask } from '../store.js';
import { TIMING_FIELDS } from '../task-columns.js';
import { CLOCK_CTE } from './sql-fragments.js';

/**
 * A new task's values, in this order: the column, how the statement reads it from the task's array
 * (`json`: its JSON; `text`: its text, SQL NULL for JSON null), and its value.
 */
interface InsertField {
  column: string;
  read: (json: string, text: string) => string;
  value: (t: NewTask) => unknown;
}

const typed = (type: string) => (_: string, text: string) => `(${text})::${type}`;
const asJson = (json: string) => json;

const INSERT_FIELDS: readonly InsertField[] = [
  { column: 'id', read: typed('text'), value: (t) => t.id },
  { column: 'type', read: typed('text'), value: (t) => t.type },
  { column: 'payload', read: asJson, value: (t) => t.payload ?? null },
  { column: 'idempotency_key', read: typed('text'), value: (t) => t.idempotencyKey },
  { column: 'priority', read: typed('integer'), value: (t) => t.priority },
  // null: now, by the statement's clock.
  { column: 'run_at', read: (_, text) => `COALESCE((${text})::bigint, clock.now)`, value: (t) => t.runAt },
  { column: 'max_attempts', read: typed('integer'), value: (t) => t.maxAttempts },
  { column: 'resumable', read: typed('boolean'), value: (t) => t.resumable },
  { column: 'requires', read: asJson, value: (t) => t.requires },
  { column: 'labels', read: asJson, value: (t) => t.labels },
  ...TIMING_FIELDS.map(
    ([column, field]): InsertField =>
      field === 'backoff'
        ? { column, read: (json) => `NULLIF(${json}, 'null'::jsonb)`, value: (t) => t.timing.backoff ?? null }
        : { column, read: typed('bigint'), value: (t) => t.timing[field] },
  ),
  { column: 'shard', read: typed('integer'), value: (t) => shardOf(t.id) },
];

/** A new task as `insertTasks` reads it: its `INSERT_FIELDS` values. */
export function insertRow(t: NewTask): unknown[] {
  return INSERT_FIELDS.map((f) => f.value(t));
}

/**
 * Insert a batch of new tasks in `created`, in input order (a task's creation entry is its row: see
 * `creationEntry`). Params: $1 now, $2 JSON array of the tasks, each its `insertRow`.
 */
export const INSERT_TASKS_SQL = `
    WITH ${CLOCK_CTE},
    ins AS (
      INSERT INTO tasks (status, created_at, ${INSERT_FIELDS.map((f) => f.column).join(', ')})
      SELECT 'created', clock.now, ${INSERT_FIELDS.map((f, k) => f.read(`n.v->${k}`, `n.v->>${k}`)).join(', ')}
      FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS n(v, i)
      CROSS JOIN clock
      ORDER BY n.i
      RETURNING id, created_at, run_at
    )
    SELECT * FROM ins`;
