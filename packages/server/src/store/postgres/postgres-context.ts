/**
 * What every PostgreSQL operation shares: the pool, the store clock's `$1`, and one way to run a
 * statement — bounded in time, retried when PostgreSQL reports a deadlock or serialization failure
 * (each statement is atomic, so running it again is safe), and with every failure mapped by
 * `toStoreError` (an unreachable or slow database is `unavailable`, never a raw driver error) — or a
 * few statements in one short transaction, retried and mapped the same way as a whole.
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
  'selectTokenOwner',
  'dueAgentLeases',
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
 *
 * Every connection also runs with JIT compilation off. Rouse's statements are short, and a statement
 * that must scan is costed above `enable_seqscan=off`'s penalty (10^10), far past `jit_above_cost`:
 * with JIT on, the server compiled such a statement with LLVM on every call (about 180 ms each for the
 * shard-lease renewal), which also loaded LLVM into each backend (about 60 MB).
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
    options: `-c search_path=${opts.schema} -c jit=off${genericPlans ? ' -c plan_cache_mode=force_generic_plan -c enable_bitmapscan=off -c enable_seqscan=off' : ''}`,
    keepAlive: true,
    types: TYPES,
    ...(statementTimeoutMs === undefined ? {} : { statement_timeout: statementTimeoutMs }),
    ...(opts.ssl === undefined ? {} : { ssl: opts.ssl }),
  };
}

/** Running statements: on a pooled connection each (`PgContext`), or inside one transaction (`transaction`). */
export interface PgStatements {
  /** `$1` of every timed statement: the injected clock's now, or null for the database's `now()`. */
  now(): number | null;
  /** Run statement `name` (its SQL `text`) with `params`; returns the rows. */
  rows<R>(name: string, text: string, params?: unknown[]): Promise<R[]>;
  /**
   * Run statement `name` with rows as arrays in column order (`rowMode: 'array'`): no object per row
   * keyed by column name, for the hot statements whose rows are mapped positionally.
   */
  arrays(name: string, text: string, params?: unknown[]): Promise<unknown[][]>;
  /** Run statement `name`; returns how many rows it changed. */
  changes(name: string, text: string, params?: unknown[]): Promise<number>;
}

/**
 * One connection's statements, each bounded in time: by the server's statement_timeout, and — for a
 * server that stopped answering at all — by a client-side timer. A connection that hung or failed is
 * `broken`: its owner discards it instead of returning it to the pool. Real timers on purpose: this
 * bounds I/O, it is not domain time (the injected Clock is).
 */
class Session {
  broken: Error | undefined;

  constructor(
    readonly client: pg.PoolClient,
    private readonly boundMs: number,
  ) {}

  async query(name: string, text: string, params: unknown[], rowMode?: 'array'): Promise<pg.QueryResult> {
    let timer: NodeJS.Timeout | undefined;
    let timedOut: Error | undefined;
    try {
      const query: pg.QueryConfig = PREPARED.has(name)
        ? { name: `rouse_${name}`, text, values: params }
        : { text, values: params };
      if (rowMode !== undefined) (query as pg.QueryArrayConfig).rowMode = rowMode;
      return await new Promise<pg.QueryResult>((resolve, reject) => {
        timer = setTimeout(() => {
          timedOut = new UnavailableError(
            `PostgreSQL did not answer within ${this.boundMs} ms (statementTimeoutMs + connectTimeoutMs); retry shortly`,
          );
          reject(timedOut);
        }, this.boundMs);
        // The callback form, not the promise node-postgres would return: with its promise, about a
        // third of what the coordinator allocated per statement lived long enough to be promoted to
        // the old generation (then freed only by full collections); with a callback almost nothing
        // is (docs/performance-journal.md, "The driver's promise").
        this.client.query(query, (err: Error | null, res: pg.QueryResult) =>
          err ? reject(err) : resolve(res),
        );
      });
    } catch (err) {
      // Point a driver error's stack at the statement's caller, not at the socket read.
      if (err instanceof Error && err !== timedOut) Error.captureStackTrace(err);
      if (timedOut !== undefined) this.broken = timedOut;
      else if (toStoreError(err) instanceof UnavailableError) this.broken = err as Error;
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }
}

export class PgContext implements PgStatements {
  closed = false;

  constructor(
    readonly pool: pg.Pool,
    readonly opts: ResolvedPostgresStoreOptions,
  ) {}

  now(): number | null {
    return this.opts.clock === 'database' ? null : this.opts.clock.now();
  }

  async rows<R>(name: string, text: string, params: unknown[] = []): Promise<R[]> {
    return (await this.run(name, text, params)).rows as R[];
  }

  async arrays(name: string, text: string, params: unknown[] = []): Promise<unknown[][]> {
    return (await this.run(name, text, params, 'array')).rows as unknown as unknown[][];
  }

  async changes(name: string, text: string, params: unknown[] = []): Promise<number> {
    return (await this.run(name, text, params)).rowCount ?? 0;
  }

  /**
   * Run one statement, retried when PostgreSQL reports a deadlock or serialization failure (a
   * statement is atomic, so running it again is safe).
   */
  run(name: string, text: string, params: unknown[], rowMode?: 'array'): Promise<pg.QueryResult> {
    return this.retried(() => this.once(name, text, params, rowMode));
  }

  /**
   * Run `fn`'s statements in ONE transaction (READ COMMITTED: each statement sees what committed
   * before it began), for writes that must lock a row before a later statement reads what others
   * wrote under that lock. The whole transaction runs again on a deadlock or serialization failure,
   * so `fn` must keep no state across attempts; any other failure rolls it back and is thrown.
   */
  transaction<T>(fn: (tx: PgStatements) => Promise<T>): Promise<T> {
    return this.retried(() => this.transactionOnce(fn));
  }

  private async retried<T>(attempt: () => Promise<T>): Promise<T> {
    for (let n = 1; ; n++) {
      if (this.closed) throw new UnavailableError('the store is closed');
      try {
        return await attempt();
      } catch (err) {
        if (n < RETRIES && isRetryableConflict(err)) continue;
        throw toStoreError(err, this.closed);
      }
    }
  }

  /** Waiting for a connection is bounded by the pool's connect timeout, each statement by the session. */
  private async session(): Promise<Session> {
    const client = await this.pool.connect();
    return new Session(client, this.opts.statementTimeoutMs + this.opts.connectTimeoutMs);
  }

  /** One statement on a pooled connection. */
  private async once(
    name: string,
    text: string,
    params: unknown[],
    rowMode?: 'array',
  ): Promise<pg.QueryResult> {
    const session = await this.session();
    try {
      return await session.query(name, text, params, rowMode);
    } finally {
      session.client.release(session.broken);
    }
  }

  private async transactionOnce<T>(fn: (tx: PgStatements) => Promise<T>): Promise<T> {
    const session = await this.session();
    const run = async (name: string, text: string, params: unknown[] = [], rowMode?: 'array') =>
      session.query(name, text, params, rowMode);
    const tx: PgStatements = {
      now: () => this.now(),
      rows: async (name, text, params) => (await run(name, text, params)).rows,
      arrays: async (name, text, params) =>
        (await run(name, text, params, 'array')).rows as unknown as unknown[][],
      changes: async (name, text, params) => (await run(name, text, params)).rowCount ?? 0,
    };
    try {
      await run('begin', 'BEGIN');
      const result = await fn(tx);
      await run('commit', 'COMMIT');
      return result;
    } catch (err) {
      if (session.broken === undefined) {
        await run('rollback', 'ROLLBACK').catch((rollbackErr: unknown) => {
          session.broken = rollbackErr as Error;
        });
      }
      throw err;
    } finally {
      // A connection left inside a transaction (its ROLLBACK failed) is discarded too.
      session.client.release(session.broken);
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
 * Split a batch into rounds with each key (a task, an agent) at most once: one statement cannot write
 * a row twice, and a repeated item must see the first one's effect (as it does on SQLite).
 */
export function rounds<T>(items: readonly T[], keyOf: (item: T) => string): { item: T; index: number }[][] {
  const out: { item: T; index: number }[][] = [];
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    const key = keyOf(item);
    const round = seen.get(key) ?? 0;
    seen.set(key, round + 1);
    if (out[round] === undefined) out[round] = [];
    out[round].push({ item, index });
  });
  return out;
}

/** A task write's key in `rounds`. */
export const byTask = (item: { taskId: string }): string => item.taskId;
