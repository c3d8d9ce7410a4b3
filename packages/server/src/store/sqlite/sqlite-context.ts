/**
 * What every SQLite operation shares: the connection, the clock, the prepared statements, and the
 * steps most writes take (read a head, append a history entry, explain a refused write).
 */
import type { JsonObject, Task, TaskEvent, TaskStatus } from '@rouse/protocol';
import type Database from 'better-sqlite3';
import type { Clock } from '../../core/clock.js';
import type { Transitioned } from '../store.js';
import { type AttemptedWrite, writeError } from '../write-errors.js';
import { AGENT_SQL, WATCHDOG_SQL } from './agent-statements.js';
import { ALERT_SQL } from './alert-statements.js';
import { EFFECT_SQL } from './effect-statements.js';
import { INTERVENTION_SQL } from './intervention-statements.js';
import { type HeadRow, jsonText, rowEventCount, type TaskRow, toHead, toTask } from './row-mapping.js';
import { SESSION_SQL } from './session-statements.js';
import { SHARD_SQL } from './shard-statements.js';
import { SNAPSHOT_SQL } from './snapshot-statements.js';
import { TASK_BLOB_SQL } from './task-blob-statements.js';
import { TASK_SQL } from './task-statements.js';

type Prepared<T extends Record<string, string>> = { readonly [K in keyof T]: Database.Statement };

function prepareAll<T extends Record<string, string>>(db: Database.Database, sql: T): Prepared<T> {
  const out: Record<string, Database.Statement> = {};
  for (const [name, text] of Object.entries(sql)) out[name] = db.prepare(text);
  return out as Prepared<T>;
}

export interface NewEvent {
  taskId: string;
  seq: number;
  at: number;
  from: TaskStatus | null;
  to: TaskStatus;
  version: number;
  attempt: number;
  actor: string;
  reason: string;
  details: JsonObject | null;
}

/** A task as a write left it, with the seq of its last history entry. */
export interface WrittenTask {
  task: Task;
  eventCount: number;
}

export class SqliteContext {
  readonly tasks: Prepared<typeof TASK_SQL>;
  readonly agents: Prepared<typeof AGENT_SQL>;
  readonly watchdog: Prepared<typeof WATCHDOG_SQL>;
  readonly shards: Prepared<typeof SHARD_SQL>;
  readonly effects: Prepared<typeof EFFECT_SQL>;
  readonly taskBlobs: Prepared<typeof TASK_BLOB_SQL>;
  readonly sessions: Prepared<typeof SESSION_SQL>;
  readonly interventions: Prepared<typeof INTERVENTION_SQL>;
  readonly snapshots: Prepared<typeof SNAPSHOT_SQL>;
  readonly alerts: Prepared<typeof ALERT_SQL>;

  constructor(
    readonly db: Database.Database,
    readonly clock: Clock,
  ) {
    this.tasks = prepareAll(db, TASK_SQL);
    this.agents = prepareAll(db, AGENT_SQL);
    this.watchdog = prepareAll(db, WATCHDOG_SQL);
    this.shards = prepareAll(db, SHARD_SQL);
    this.effects = prepareAll(db, EFFECT_SQL);
    this.taskBlobs = prepareAll(db, TASK_BLOB_SQL);
    this.sessions = prepareAll(db, SESSION_SQL);
    this.interventions = prepareAll(db, INTERVENTION_SQL);
    this.snapshots = prepareAll(db, SNAPSHOT_SQL);
    this.alerts = prepareAll(db, ALERT_SQL);
    for (const st of [
      this.tasks.selectTask,
      this.tasks.selectTaskBySeq,
      this.tasks.selectTaskByIdempotencyKey,
      this.tasks.selectClaimCandidates,
      this.tasks.listTasks,
      this.tasks.listTasksOfStatus,
      this.tasks.listCompletedTasks,
    ]) {
      st.raw(true);
    }
  }

  head(id: string): HeadRow | undefined {
    return this.tasks.selectTaskHead.get({ id }) as HeadRow | undefined;
  }

  /** The ids of the tasks agent `agentId` holds. */
  heldTaskIds(agentId: string): string[] {
    return (this.agents.selectHeldTaskIds.all({ agentId }) as { id: string }[]).map((r) => r.id);
  }

  task(id: string): Task | null {
    const row = this.tasks.selectTask.get({ id }) as TaskRow | undefined;
    return row === undefined ? null : toTask(row);
  }

  /** The task at rowid `seq`, which the current transaction just wrote. */
  written(seq: number): WrittenTask {
    const row = this.tasks.selectTaskBySeq.get({ seq }) as TaskRow;
    return { task: toTask(row), eventCount: rowEventCount(row) };
  }

  /** The task `id`, which the current transaction just wrote. */
  writtenById(id: string): WrittenTask {
    const row = this.tasks.selectTask.get({ id }) as TaskRow;
    return { task: toTask(row), eventCount: rowEventCount(row) };
  }

  appendEvent(e: NewEvent): TaskEvent {
    this.tasks.insertEvent.run({ ...e, details: jsonText(e.details) });
    return {
      seq: e.seq,
      at: e.at,
      from: e.from,
      to: e.to,
      version: e.version,
      attempt: e.attempt,
      actor: e.actor,
      reason: e.reason,
      details: e.details,
    };
  }

  /** The written task after a transition from `from`, with its (last) history entry appended. */
  transitioned(
    { task, eventCount }: WrittenTask,
    from: TaskStatus,
    at: number,
    actor: string,
    reason: string,
    details: JsonObject | null = null,
  ): Transitioned {
    const event = this.appendEvent({
      taskId: task.id,
      seq: eventCount,
      at,
      from,
      to: task.status,
      version: task.version,
      attempt: task.attempt,
      actor,
      reason,
      details,
    });
    return { task, events: [event] };
  }

  /** Explain why a conditional write changed nothing (reads the head again). */
  refused(write: AttemptedWrite): Error {
    return writeError(toHead(this.head(write.taskId)), write);
  }
}
