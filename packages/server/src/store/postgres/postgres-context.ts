/**
 * What every PostgreSQL operation shares: the pool, the store clock's `$1`, and one way to run a
 * statement — bounded in time, retried when PostgreSQL reports a deadlock or serialization failure
 * (each statement is atomic, so running it again is safe), and with every failure mapped by
 * `toStoreError` (an unreachable or slow database is `unavailable`, never a raw driver error).
 */
import pg from 'pg';
import { UnavailableError } from '../../core/errors.js';
import type { Transitioned } from '../store.js';
import { type AttemptedWrite, writeError } from '../write-errors.js';
import { isRetryableConflict, toStoreError } from './postgres-errors.js';
import type { ResolvedPostgresConnectionOptions, ResolvedPostgresStoreOptions } from './postgres-options.js';
import { type HeadRow, toEvent, toHead, toTask, type WrittenRow } from './row-mapping.js';
import { TASK_SQL } from './task-statements.js';

/** Statements run often enough to keep prepared on each connection (parsed and planned once). */
const PREPARED = new Set([
  'claimTasks',
  'startTask',
  'recordHeartbeats',
  'completeTasks',
  'completeAndClaim',
  'failTask',
  'expireLease',
  'selectTask',
  'insertTasks',
  'appendLogs',
  'saveCheckpoint',
  'setResultRef',
  'selectHeads',
  'selectShardLeases',
  'recordAgentHeartbeats',
  'listDependencies',
]);

const RETRIES = 3;
const INT8_OID = 20;

/** bigint columns are epoch milliseconds and counters: numbers, not strings (per pool, not global). */
const TYPES = {
  getTypeParser(oid: number, format?: string) {
    if (oid === INT8_OID && format !== 'binary') return (v: string) => Number.parseInt(v, 10);
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

/**
 * node-postgres settings for a connection of `opts`, fixed at connect (no extra round trip): the
 * schema, and — for the store's pool — generic plans. Every statement is ours and written to plan
 * well without its parameters' values (each reaches its rows by index whatever they are), so the
 * planner runs once per connection instead of on every call (about 1 ms of a claim's 1.5). A plan is
 * often made on a nearly empty table (a new deployment's first calls) and kept until statistics
 * change, so it must not depend on them: no sequential scans (on a table of one page the planner
 * prefers one, and the cached plan then scans every task on each completion as the table grows — seen
 * as 1.2 ms completions and p50 7 ms at 500 tasks/s), and no bitmap scans (they fetch every claimable
 * or matching row and sort them, where an index scan in order stops after a few). Statements with no
 * index to use still run, scanning as before.
 */
export function pgConfig(
  opts: ResolvedPostgresConnectionOptions,
  statementTimeoutMs?: number,
  genericPlans = false,
): pg.ClientConfig {
  return {
    connectionString: opts.connectionString,
    connectionTimeoutMillis: opts.connectTimeoutMs,
    application_name: opts.applicationName,
    options: `-c search_path=${opts.schema}${genericPlans ? ' -c plan_cache_mode=force_generic_plan -c enable_bitmapscan=off -c enable_seqscan=off' : ''}`,
    keepAlive: true,
    types: TYPES,
    ...(statementTimeoutMs === undefined ? {} : { statement_timeout: statementTimeoutMs }),
    ...(opts.ssl === undefined ? {} : { ssl: opts.ssl }),
  };
}

export class PgContext {
  closed = false;

  constructor(
    readonly pool: pg.Pool,
    readonly opts: ResolvedPostgresStoreOptions,
  ) {}

  /** `$1` of every timed statement: the injected clock's now, or null for the database's `now()`. */
  now(): number | null {
    return this.opts.clock === 'database' ? null : this.opts.clock.now();
  }

  /** Run statement `name` (its SQL `text`) with `params`; returns the rows. */
  async rows<R>(name: string, text: string, params: unknown[] = []): Promise<R[]> {
    return (await this.run(name, text, params)).rows as R[];
  }

  /**
   * Run statement `name` with rows as arrays in column order (`rowMode: 'array'`): no object per row
   * keyed by column name, for the hot statements whose rows are mapped positionally.
   */
  async arrays(name: string, text: string, params: unknown[] = []): Promise<unknown[][]> {
    return (await this.run(name, text, params, 'array')).rows as unknown as unknown[][];
  }

  /** Run statement `name`; returns how many rows it changed. */
  async changes(name: string, text: string, params: unknown[] = []): Promise<number> {
    return (await this.run(name, text, params)).rowCount ?? 0;
  }

  async run(name: string, text: string, params: unknown[], rowMode?: 'array'): Promise<pg.QueryResult> {
    for (let attempt = 1; ; attempt++) {
      if (this.closed) throw new UnavailableError('the store is closed');
      try {
        return await this.once(name, text, params, rowMode);
      } catch (err) {
        if (attempt < RETRIES && isRetryableConflict(err)) continue;
        throw toStoreError(err, this.closed);
      }
    }
  }

  /**
   * One statement on a pooled connection. Waiting for a connection is bounded by the pool's connect
   * timeout; the statement by the server's statement_timeout, and — for a server that stopped answering
   * at all — by a client-side timer that discards the connection. Real timers on purpose: this bounds
   * I/O, it is not domain time (the injected Clock is).
   */
  private async once(
    name: string,
    text: string,
    params: unknown[],
    rowMode?: 'array',
  ): Promise<pg.QueryResult> {
    const client = await this.pool.connect();
    const boundMs = this.opts.statementTimeoutMs + this.opts.connectTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    let broken: Error | undefined;
    try {
      const query: pg.QueryConfig = PREPARED.has(name)
        ? { name: `rouse_${name}`, text, values: params }
        : { text, values: params };
      if (rowMode !== undefined) (query as pg.QueryArrayConfig).rowMode = rowMode;
      return await new Promise<pg.QueryResult>((resolve, reject) => {
        timer = setTimeout(() => {
          broken = new UnavailableError(
            `PostgreSQL did not answer within ${boundMs} ms (statementTimeoutMs + connectTimeoutMs); retry shortly`,
          );
          reject(broken);
        }, boundMs);
        client.query(query).then(resolve, reject);
      });
    } catch (err) {
      if (broken === undefined && toStoreError(err) instanceof UnavailableError) broken = err as Error;
      throw err;
    } finally {
      clearTimeout(timer);
      // A connection that failed or hung is discarded, never reused.
      client.release(broken);
    }
  }

  /** Heads of `ids` by id, to explain refused writes. */
  async heads(ids: string[]): Promise<Map<string, HeadRow>> {
    const rows = await this.rows<HeadRow>('selectHeads', TASK_SQL.selectHeads, [ids]);
    return new Map(rows.map((r) => [r.id, r]));
  }

  /** The error for a conditional write that changed nothing (reads the head again). */
  async refused(write: AttemptedWrite): Promise<Error> {
    const head = (await this.heads([write.taskId])).get(write.taskId);
    return writeError(toHead(head), write);
  }
}

/** A written row (with its history entries) as the store's result. */
export function transitioned(row: WrittenRow): Transitioned {
  return { task: toTask(row), events: row.events.map(toEvent) };
}

/**
 * Split a batch into rounds with each task at most once: one statement cannot write a row twice, and
 * a repeated item must see the first one's effect (as it does on SQLite).
 */
export function rounds<T extends { taskId: string }>(items: T[]): { item: T; index: number }[][] {
  const out: { item: T; index: number }[][] = [];
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    const round = seen.get(item.taskId) ?? 0;
    seen.set(item.taskId, round + 1);
    if (out[round] === undefined) out[round] = [];
    out[round].push({ item, index });
  });
  return out;
}
