/**
 * What only PostgreSQL has: the migration ledger under an advisory lock, refusing a newer schema,
 * SKIP LOCKED claims across separate pools, the database's clock, NOTIFY between stores, and
 * `unavailable` (then recovery) when the server is away.
 */
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freePort } from '../../../../../test/harness/ports.mjs';
import { type FreshSchema, freshSchema, privatePostgres } from '../../../../../test/harness/postgres.js';
import { ManualClock } from '../../core/clock.js';
import { RouseError } from '../../core/errors.js';
import { newAgent } from '../../test-support/store-contract/agent-fixtures.js';
import { BACKOFF, newTask, T0, TIMING } from '../../test-support/store-contract/harness.js';
import { checkHistoryStorage } from '../../test-support/store-contract/history-storage.js';
import { checkMigratedTimings, LEGACY_TIMINGS } from '../../test-support/store-contract/timing-migration.js';
import { shardOf } from '../lease-shards.js';
import type { ClaimableNotice, Store } from '../store.js';
import { ADMIN_SQL } from './admin-statements.js';
import { AGENT_SQL } from './agent-statements.js';
import { migrateOnClient, migratePostgres, POSTGRES_MIGRATIONS, postgresMigrationStatus } from './migrate.js';
import { pgConfig } from './postgres-context.js';
import { resolvePostgresConnectionOptions } from './postgres-options.js';
import { createPostgresStore } from './postgres-store.js';
import { TASK_SQL } from './task-statements.js';
import { WATCHDOG_SQL } from './watchdog-statements.js';

async function until(pred: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!pred()) {
    if (performance.now() > deadline) throw new Error(`not true within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function rejection(p: Promise<unknown>): Promise<RouseError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RouseError);
  return err as RouseError;
}

describe('PostgreSQL specifics', () => {
  let db: FreshSchema;
  const stores: Store[] = [];
  const open = async (options: Partial<Parameters<typeof createPostgresStore>[0]> = {}) => {
    const store = await createPostgresStore({
      connectionString: db.connectionString,
      schema: db.schema,
      ...options,
    });
    stores.push(store);
    return store;
  };
  const sql = async <T = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<T[]> => {
    const client = new pg.Client({ connectionString: db.connectionString });
    await client.connect();
    try {
      return (await client.query(text, values)).rows as T[];
    } finally {
      await client.end();
    }
  };

  beforeEach(async () => {
    db = await freshSchema('pgspec');
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    await db.drop();
  });

  it('migrates once under the advisory lock, even when two coordinators start together', async () => {
    const conn = { connectionString: db.connectionString, schema: db.schema };
    const reports = await Promise.all([migratePostgres(conn), migratePostgres(conn), migratePostgres(conn)]);
    expect(reports.map((r) => r.applied.length).sort()).toEqual([0, 0, POSTGRES_MIGRATIONS.length]);
    expect(reports.every((r) => r.toVersion === POSTGRES_MIGRATIONS.length)).toBe(true);
    const ledger = await sql<{ version: number; name: string }>(
      `SELECT version, name FROM "${db.schema}".rouse_migrations ORDER BY version`,
    );
    expect(ledger).toEqual(POSTGRES_MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
    const status = await postgresMigrationStatus(conn);
    const latest = POSTGRES_MIGRATIONS.length;
    expect(status).toMatchObject({ databaseVersion: latest, codeVersion: latest, pending: [] });
    expect(Math.abs(status.applied[0]!.appliedAt - Date.now())).toBeLessThan(60_000);
    // A store opening an up-to-date schema applies nothing more.
    await open();
    expect(await sql(`SELECT 1 FROM "${db.schema}".rouse_migrations`)).toHaveLength(latest);
  });

  it('runs all pending migrations in one transaction: a failing one leaves nothing, not even the schema', async () => {
    const client = new pg.Client({ connectionString: db.connectionString });
    await client.connect();
    try {
      const broken = [
        ...POSTGRES_MIGRATIONS,
        {
          version: POSTGRES_MIGRATIONS.length + 1,
          name: 'good',
          sql: () => 'CREATE TABLE extra (x integer)',
        },
        { version: POSTGRES_MIGRATIONS.length + 2, name: 'bad', sql: () => 'CREATE TABLE broken (' },
      ];
      await expect(migrateOnClient(client, db.schema, null, broken)).rejects.toThrow();
      const found = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [db.schema]);
      expect(found.rowCount).toBe(0);
      const report = await migrateOnClient(client, db.schema, T0, broken.slice(0, -1));
      expect(report).toEqual({
        fromVersion: 0,
        toVersion: POSTGRES_MIGRATIONS.length + 1,
        applied: [...POSTGRES_MIGRATIONS.map((m) => m.name), 'good'],
      });
      expect((await migrateOnClient(client, db.schema, T0, broken.slice(0, -1))).applied).toEqual([]);
    } finally {
      await client.end();
    }
  });

  it('0016 moves each task’s timing from its JSON object into columns; the store goes on using it', async () => {
    const client = new pg.Client({ connectionString: db.connectionString });
    await client.connect();
    try {
      const before = POSTGRES_MIGRATIONS.findIndex((m) => m.name === '0016_timing_columns');
      await migrateOnClient(client, db.schema, T0, POSTGRES_MIGRATIONS.slice(0, before));
      for (const [id, timing] of Object.entries(LEGACY_TIMINGS)) {
        await client.query(
          `INSERT INTO "${db.schema}".tasks (id, type, status, payload, priority, run_at, max_attempts, resumable,
                                             requires, labels, timing, created_at, shard)
           VALUES ($1, 'work', 'created', '{}', 0, $2, 3, false, '[]', '{}', $3, $2, $4)`,
          [id, T0, JSON.stringify(timing), shardOf(id)],
        );
      }
    } finally {
      await client.end();
    }
    const store = await open({ clock: new ManualClock(T0) });
    await checkMigratedTimings(store, T0);
  });

  it('refuses a schema migrated by a newer rouse, naming both versions', async () => {
    await migratePostgres({ connectionString: db.connectionString, schema: db.schema });
    await sql(`INSERT INTO "${db.schema}".rouse_migrations VALUES (99, '0099_future', 0)`);
    for (const attempt of [
      () => open(),
      () => open({ migrate: false }),
      () => migratePostgres({ connectionString: db.connectionString, schema: db.schema }),
    ]) {
      const err = await rejection(attempt());
      expect(err.code).toBe('unavailable');
      expect(err.message).toContain('version 99');
      expect(err.message).toContain(`version ${POSTGRES_MIGRATIONS.length}`);
    }
  });

  it('with migrations off, refuses a schema that is behind and says to run rouse migrate', async () => {
    const err = await rejection(open({ migrate: false }));
    expect(err.code).toBe('unavailable');
    expect(err.message).toContain('rouse migrate');
    expect(
      await postgresMigrationStatus({ connectionString: db.connectionString, schema: db.schema }),
    ).toEqual({
      databaseVersion: 0,
      codeVersion: POSTGRES_MIGRATIONS.length,
      applied: [],
      pending: POSTGRES_MIGRATIONS.map((m) => m.name),
    });
  });

  /** A connection set up as the store's pool sets up its own (generic plans, no sequential scans). */
  async function storeLikeClient(): Promise<pg.Client> {
    const conn = resolvePostgresConnectionOptions({
      connectionString: db.connectionString,
      schema: db.schema,
    });
    const client = new pg.Client(pgConfig(conn, 5000, true));
    await client.connect();
    return client;
  }

  it('runs every connection with JIT off, so a statement that must scan is never compiled', async () => {
    // With sequential scans disabled, a statement with no index to use is costed past the 10^10
    // penalty, far above jit_above_cost: a server with JIT would compile it with LLVM on every call.
    await open();
    const conn = resolvePostgresConnectionOptions({
      connectionString: db.connectionString,
      schema: db.schema,
    });
    const pooled = await storeLikeClient();
    const plain = new pg.Client(pgConfig(conn));
    await plain.connect();
    try {
      for (const client of [pooled, plain]) {
        expect((await client.query('SHOW jit')).rows[0].jit).toBe('off');
      }
      const scan = 'SELECT count(*) FROM tasks WHERE attempt >= 0';
      const plan = (await pooled.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${scan}`)).rows[0]['QUERY PLAN'][0];
      expect(plan.Plan['Total Cost']).toBeGreaterThan(1e9); // the penalty: past any jit_above_cost
      expect(plan.JIT).toBeUndefined();
      // The premise, where this server has JIT: the same statement on a connection with JIT on is compiled.
      const { available } = (await pooled.query('SELECT pg_jit_available() AS available')).rows[0];
      if (available) {
        await pooled.query('SET jit = on');
        const jitted = (await pooled.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${scan}`)).rows[0][
          'QUERY PLAN'
        ][0];
        expect(jitted.JIT?.Functions).toBeGreaterThan(0);
      }
    } finally {
      await pooled.end();
      await plain.end();
    }
  });

  it('hot statements planned while the table was empty still reach rows by index once it has grown', async () => {
    // A coordinator prepares its statements on its first calls, often on an empty table; its connections
    // keep those generic plans until statistics change. They must not scan the whole table then.
    const store = await open();
    const client = await storeLikeClient();
    try {
      const none = [[0], ['tsk_none'], ['agt_a'], [1], ['agent:agt_a'], [null], [false], [null]];
      await client.query({
        name: 'rouse_completeTasks',
        text: TASK_SQL.completeTasks,
        values: [null, ...none],
      });
      await store.createTasks(Array.from({ length: 3000 }, (_, i) => newTask(`tsk_grown_${i}`)));
      const plan = await client.query(
        `EXPLAIN EXECUTE "rouse_completeTasks"(NULL, '{0}', '{tsk_grown_7}', '{agt_a}', '{1}', '{agent:agt_a}', '{NULL}', '{f}', '{NULL}')`,
      );
      const text = plan.rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
      expect(text).toMatch(/Index Scan using tasks_id_key on tasks/);
      expect(text).not.toMatch(/Seq Scan on tasks/);
    } finally {
      await client.end();
    }
  });

  it('batch statements keyed by id (heartbeats, lost agents, conditions, history) reach their rows by index', async () => {
    // Their batch is a JSON array or arrays of values, which the planner takes for 100 rows: joined on
    // the id alone, a table of a few thousand rows planned as a scan of all of it, for every batch.
    const store = await open();
    const client = await storeLikeClient();
    const plans: Record<string, string> = {};
    const prepare = (name: string, text: string, values: unknown[]) =>
      client.query({ name: `rouse_plan_${name}`, text, values });
    const explain = async (name: string, args: string) => {
      const plan = await client.query(`EXPLAIN EXECUTE "rouse_plan_${name}"(${args})`);
      plans[name] = plan.rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
      return plans[name];
    };
    try {
      // Planned on empty tables, as a coordinator's first calls plan them.
      await prepare('taskBeats', TASK_SQL.recordHeartbeats, [null, '[]', []]);
      await prepare('agentBeats', AGENT_SQL.recordAgentHeartbeats, [null, '[]', []]);
      await prepare('lost', WATCHDOG_SQL.markAgentsLost, [null, '[]', []]);
      await prepare('conditions', WATCHDOG_SQL.applyConditionChanges, [null, '[]', []]);
      await prepare('refresh', WATCHDOG_SQL.refreshOpenConditions, [[], 1]);
      await prepare('events', TASK_SQL.selectEventsByRef, [[], []]);
      await store.createTasks(Array.from({ length: 3000 }, (_, i) => newTask(`tsk_grown_${i}`)));
      for (let i = 0; i < 600; i++)
        await store.registerAgent(newAgent(`agt_grown_${i}`, { tokenHash: `h${i}` }));
      const beat = `'[{"i":0,"id":"tsk_grown_7","agent_id":"agt_a","version":1}]'`;
      expect(await explain('taskBeats', `NULL, ${beat}, '{tsk_grown_7}'`)).toMatch(
        /Index Scan using tasks_id_key on tasks/,
      );
      const agent = `'[{"i":0,"id":"agt_grown_7","incarnation":1}]'`;
      expect(await explain('agentBeats', `NULL, ${agent}, '{agt_grown_7}'`)).toMatch(
        /Index Scan using agents_id_key on agents/,
      );
      expect(await explain('lost', `NULL, ${agent}, '{agt_grown_7}'`)).toMatch(
        /Index Scan using agents_id_key on agents/,
      );
      const change = `'[{"i":0,"kind":"open","agent_id":"agt_grown_7","incarnation":1,"condition":"progress_stalled","task_id":""}]'`;
      expect(await explain('conditions', `NULL, ${change}, '{agt_grown_7}'`)).toMatch(
        /Index Scan using agents_id_key on agents/,
      );
      expect(await explain('refresh', `'{agt_grown_7}', 1`)).toMatch(
        /Index Scan using agents_id_key on agents/,
      );
      expect(await explain('events', `'{tsk_grown_7}', '{1}'`)).toMatch(
        /Index (Only )?Scan using task_events_pkey/,
      );
      for (const [name, text] of Object.entries(plans)) {
        // A scan of a whole table shows as an index scan without a condition (sequential scans are off).
        const whole = text
          .split('\n')
          .map((line, k, all) => ({ line, next: all[k + 1] ?? '' }))
          .filter(({ line }) => /Index Scan using (tasks_pkey|agents_pkey) on (tasks|agents)/.test(line))
          .filter(({ next }) => !/Index Cond/.test(next));
        expect(whole, `${name}:\n${text}`).toEqual([]);
      }
    } finally {
      await client.end();
    }
  });

  it('finds the next claimable moment through tasks_deferred, which holds no task claimable at once', async () => {
    const clock = new ManualClock(T0);
    const store = await open({ clock });
    const client = await storeLikeClient();
    try {
      await client.query({
        name: 'rouse_next',
        text: ADMIN_SQL.selectNextClaimableAt,
        values: [T0, null, null],
      });
      await store.createTasks(Array.from({ length: 3000 }, (_, i) => newTask(`tsk_now_${i}`)));
      await store.createTasks([newTask('tsk_later', { runAt: T0 + 60_000 })]);
      expect(await store.nextClaimableAt()).toBe(T0 + 60_000);
      const deferred = await sql<{ n: string }>(
        `SELECT count(*) AS n FROM "${db.schema}".tasks WHERE available_at > created_at`,
      );
      expect(Number(deferred[0]?.n)).toBe(1);
      const plan = await client.query(`EXPLAIN EXECUTE "rouse_next"(${T0}, NULL, NULL)`);
      const text = plan.rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
      expect(text).toMatch(/Index (Only )?Scan using tasks_deferred on tasks/);
      expect(text).not.toMatch(/Seq Scan on tasks/);
    } finally {
      await client.end();
    }
  });

  it('lists by status through the status index, also with a plan made on an empty table', async () => {
    const store = await open();
    const client = await storeLikeClient();
    try {
      await client.query({
        name: 'rouse_listTasksByStatus',
        text: TASK_SQL.listTasksByStatus,
        values: [null, null, null, null, 51, null, ['running']],
      });
      await store.createTasks(Array.from({ length: 3000 }, (_, i) => newTask(`tsk_listed_${i}`)));
      const explain = async (statuses: string) => {
        const plan = await client.query(
          `EXPLAIN EXECUTE "rouse_listTasksByStatus"(NULL, NULL, NULL, NULL, 51, NULL, '${statuses}')`,
        );
        return plan.rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
      };
      const plan = await explain('{running,completed}');
      // Non-completed statuses through tasks_status; completed ones by walking the primary key.
      expect(plan).toMatch(/Index Scan Backward using tasks_status on tasks/);
      expect(plan).toMatch(/Index Scan Backward using tasks_pkey on tasks/);
      expect(plan).not.toMatch(/Seq Scan on tasks/);
      const page = await store.listTasks({ statuses: ['created'], limit: 5 });
      expect(page.tasks.map((t) => t.id)).toEqual(
        [2999, 2998, 2997, 2996, 2995].map((i) => `tsk_listed_${i}`),
      );
    } finally {
      await client.end();
    }
  });

  it("finds a shard's due agent leases through agents_shard_leases, also with a plan made on an empty table", async () => {
    await open();
    const client = await storeLikeClient();
    try {
      await client.query({
        name: 'rouse_dueAgentLeases',
        text: WATCHDOG_SQL.dueAgentLeases,
        values: [T0, [3]],
      });
      await client.query(
        `INSERT INTO agents (id, agent_type, name, task_types, labels, token_hash, registered_at, shard,
                            lease_expires_at)
         SELECT 'agt_' || n, 'worker', 'w' || n, '[]', '{}', 'hash-' || n, $1::bigint, n % 64,
                CASE WHEN n % 5 = 0 THEN NULL ELSE $1::bigint + n END
         FROM generate_series(1, 3000) AS n`,
        [T0],
      );
      const plan = await client.query(`EXPLAIN EXECUTE "rouse_dueAgentLeases"(${T0 + 100}, '{3,7}')`);
      const text = plan.rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
      expect(text).toMatch(/Index Scan using agents_shard_leases on agents/);
      expect(text).not.toMatch(/Seq Scan on agents/);
      const due = await client.query({
        name: 'rouse_dueAgentLeases',
        text: WATCHDOG_SQL.dueAgentLeases,
        values: [T0 + 100, [3, 7]],
      });
      // Shard 3 or 7, lease set (n not a multiple of 5) and ending by T0 + 100: n = 3, 7, 67, 71.
      expect(due.rows.map((r: { id: string }) => r.id)).toEqual(['agt_3', 'agt_7', 'agt_67', 'agt_71']);
    } finally {
      await client.end();
    }
  });

  it('gives every task to exactly one claim across two stores with their own pools (SKIP LOCKED)', async () => {
    const clock = new ManualClock(T0);
    const a = await open({ clock, poolSize: 6 });
    const b = await open({ clock, poolSize: 6 });
    const ids = Array.from({ length: 300 }, (_, i) => `tsk_${i}`);
    await a.createTasks(ids.map((id) => newTask(id)));
    const claimed: string[] = [];
    const worker = async (store: Store, agentId: string) => {
      for (;;) {
        const got = await store.claimTasks({
          agentId,
          types: ['work'],
          max: 7,
          start: true,
          backoff: BACKOFF,
        });
        if (got.length === 0) return;
        claimed.push(...got.map((c) => c.task.id));
      }
    };
    await Promise.all(Array.from({ length: 12 }, (_, i) => worker(i % 2 === 0 ? a : b, `agt_${i}`)));
    expect(claimed).toHaveLength(300);
    expect(new Set(claimed).size).toBe(300);
    const events = await sql<{ n: string }>(
      `SELECT count(*) AS n FROM "${db.schema}".task_events WHERE reason = 'claimed'`,
    );
    expect(Number(events[0]!.n)).toBe(300);
  });

  it('stores no row for a creation, one for a claim and its start, and reads what earlier builds stored', async () => {
    await checkHistoryStorage(await open(), {
      rows: async () =>
        (
          await sql<{ task_id: string; seq: number; to_status: string }>(
            `SELECT task_id, seq, to_status FROM "${db.schema}".task_events ORDER BY task_id, seq`,
          )
        ).map((r): [string, number, string] => [r.task_id, Number(r.seq), r.to_status]),
      storeLegacy: async (taskId, e) => {
        await sql(
          `INSERT INTO "${db.schema}".task_events (task_id, seq, at, from_status, to_status, version, attempt, actor, reason, details)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL)`,
          [taskId, e.seq, e.at, e.from, e.to, e.version, e.attempt, e.actor, e.reason],
        );
      },
    });
  });

  it('creates one task when two stores race on the same idempotency key', async () => {
    const a = await open();
    const b = await open();
    for (let round = 0; round < 20; round++) {
      const key = `race-${round}`;
      const [[x], [y]] = await Promise.all([
        a.createTasks([newTask(`tsk_a${round}`, { idempotencyKey: key })]),
        b.createTasks([newTask(`tsk_b${round}`, { idempotencyKey: key, payload: { id: `tsk_a${round}` } })]),
      ]);
      expect(x!.task.id).toBe(y!.task.id);
      expect([x!.deduplicated, y!.deduplicated].sort()).toEqual([false, true]);
    }
    expect(await sql(`SELECT 1 FROM "${db.schema}".tasks`)).toHaveLength(20);
  });

  it("uses the database's clock for every time it writes when the clock is 'database'", async () => {
    const store = await open();
    const [{ ms: before }] = (await sql<{ ms: string }>(
      'SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms',
    )) as [{ ms: string }];
    const now = await store.now();
    expect(now).toBeGreaterThanOrEqual(Number(before));
    expect(now - Number(before)).toBeLessThan(5000);
    await store.createTasks([newTask('tsk_clock')]);
    const [c] = await store.claimTasks({
      agentId: 'agt',
      types: ['work'],
      max: 1,
      start: false,
      backoff: BACKOFF,
    });
    const after = await store.now();
    expect(c!.task.createdAt).toBeGreaterThanOrEqual(Number(before));
    expect(c!.task.claimedAt!).toBeLessThanOrEqual(after);
    expect(c!.task.leaseExpiresAt).toBe(c!.task.claimedAt! + TIMING.claimTimeoutMs);
    // bigint is a number only on the store's own pool: the process-wide parser is untouched.
    expect(typeof (await sql('SELECT 1::bigint AS n'))[0]!.n).toBe('string');
  });

  it('delivers claimable notices from one store to another (NOTIFY), and not across schemas', async () => {
    const a = await open();
    const b = await open();
    const other = await freshSchema('pgspec_other');
    const c = await createPostgresStore({ connectionString: other.connectionString, schema: other.schema });
    try {
      const heardB: ClaimableNotice[] = [];
      const heardC: ClaimableNotice[] = [];
      b.onClaimable((n) => heardB.push(n));
      c.onClaimable((n) => heardC.push(n));
      // b's LISTEN connection opens in the background: publish until it hears.
      await until(() => {
        void a.publishClaimable({ types: ['work'], origin: 'a' });
        return heardB.length > 0;
      });
      expect(heardB[0]).toEqual({ types: ['work'], origin: 'a' });
      await c.publishClaimable({ types: ['mine'] });
      await until(() => heardC.length > 0);
      expect(heardC.every((n) => n.types[0] === 'mine')).toBe(true);
    } finally {
      await c.close();
      await other.drop();
    }
  });

  it('answers unavailable within the connect timeout when the server cannot be reached', async () => {
    const port = await freePort();
    const started = performance.now();
    const err = await rejection(
      createPostgresStore({
        connectionString: `postgres://x:y@127.0.0.1:${port}/none`,
        connectTimeoutMs: 1000,
      }),
    );
    expect(err.code).toBe('unavailable');
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('answers unavailable when a statement outlives statementTimeoutMs', async () => {
    const clock = new ManualClock(T0);
    const store = await open({ clock, statementTimeoutMs: 200 });
    await store.createTasks([newTask('tsk_locked')]);
    const [c] = await store.claimTasks({
      agentId: 'agt',
      types: ['work'],
      max: 1,
      start: true,
      backoff: BACKOFF,
    });
    clock.advance(TIMING.heartbeatTimeoutMs);
    const locker = new pg.Client({ connectionString: db.connectionString });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`SELECT 1 FROM "${db.schema}".tasks WHERE id = 'tsk_locked' FOR UPDATE`);
      const err = await rejection(store.expireLease({ taskId: c!.task.id, version: 1, backoff: BACKOFF }));
      expect(err.code).toBe('unavailable');
      await locker.query('ROLLBACK');
      expect(await store.expireLease({ taskId: c!.task.id, version: 1, backoff: BACKOFF })).not.toBeNull();
    } finally {
      await locker.end();
    }
  });

  it('rejects bad options naming the option', async () => {
    const base = { connectionString: db.connectionString };
    await expect(createPostgresStore({ ...base, schema: 'Bad-Name' })).rejects.toThrow(/schema/);
    await expect(createPostgresStore({ ...base, poolSize: 0 })).rejects.toThrow(/poolSize/);
    await expect(createPostgresStore({ ...base, statementTimeoutMs: 1.5 })).rejects.toThrow(
      /statementTimeoutMs/,
    );
    await expect(createPostgresStore({ connectionString: 'mysql://x' })).rejects.toThrow(/connectionString/);
  });
});

describe('PostgreSQL outage', () => {
  it('answers unavailable while the server is down and recovers by itself when it is back', async () => {
    const server = await privatePostgres();
    const stores: Store[] = [];
    try {
      const clock = new ManualClock(T0);
      const a = await createPostgresStore({ connectionString: server.url, clock, connectTimeoutMs: 1000 });
      const b = await createPostgresStore({ connectionString: server.url, clock, connectTimeoutMs: 1000 });
      stores.push(a, b);
      await a.createTasks([newTask('tsk_1'), newTask('tsk_2')]);
      const heard: ClaimableNotice[] = [];
      b.onClaimable((n) => heard.push(n));
      await until(() => {
        void a.publishClaimable({ types: ['before'] }).catch(() => undefined);
        return heard.length > 0;
      });

      await server.stop();
      const started = performance.now();
      for (const call of [
        () => a.ping(),
        () => a.getTask('tsk_1'),
        () => a.claimTasks({ agentId: 'x', types: ['work'], max: 1, start: false, backoff: BACKOFF }),
      ]) {
        expect((await rejection(call())).code).toBe('unavailable');
      }
      expect(performance.now() - started).toBeLessThan(5000);

      await server.restart();
      let ok = false;
      await until(() => {
        a.ping().then(
          () => {
            ok = true;
          },
          () => undefined,
        );
        return ok;
      });
      const [c] = await a.claimTasks({
        agentId: 'x',
        types: ['work'],
        max: 1,
        start: false,
        backoff: BACKOFF,
      });
      expect(c!.task.id).toBe('tsk_1');
      // The LISTEN connection came back too.
      heard.length = 0;
      await until(() => {
        void a.publishClaimable({ types: ['after'] }).catch(() => undefined);
        return heard.some((n) => n.types[0] === 'after');
      }, 20_000);
    } finally {
      for (const s of stores) await s.close();
      await server.destroy();
    }
  });
});
