import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../../../test/harness/wait.js';
import { ManualClock } from '../../core/clock.js';
import { RouseError } from '../../core/errors.js';
import { beat, newAgent } from '../../test-support/store-contract/agent-fixtures.js';
import { BACKOFF, newTask, T0 } from '../../test-support/store-contract/harness.js';
import { checkHistoryStorage } from '../../test-support/store-contract/history-storage.js';
import { runStoreContract } from '../../test-support/store-contract/index.js';
import { checkMigratedTimings, LEGACY_TIMINGS } from '../../test-support/store-contract/timing-migration.js';
import { walIndex } from '../../test-support/wal-index.js';
import { TIMING_COLUMN_NAMES } from '../task-columns.js';
import { WATCHDOG_SQL } from './agent-statements.js';
import { migrateSqlite, SQLITE_MIGRATIONS, type SqliteMigration } from './migrate.js';
import { createSqliteStore, WAL_AUTOCHECKPOINT_PAGES, WAL_BACKSTOP_PAGES } from './sqlite-store.js';
import { TASK_COLUMN_NAMES, TASK_SQL } from './task-statements.js';

const LIST_PARAMS = { beforeSeq: null, type: null, agentId: null, labels: null, search: null, limit: 51 };

runStoreContract('sqlite :memory:', async (clock) => {
  const store = createSqliteStore({ path: ':memory:', clock });
  return { store, cleanup: () => store.close() };
});

runStoreContract('sqlite file (WAL)', async (clock) => {
  const dir = mkdtempSync(join(tmpdir(), 'rouse-store-'));
  const store = createSqliteStore({ path: join(dir, 'rouse.db'), clock });
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('SQLite specifics', () => {
  let dir: string;
  let path: string;
  let clock: ManualClock;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rouse-sqlite-'));
    path = join(dir, 'rouse.db');
    clock = new ManualClock(T0);
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('opens a file in WAL mode with foreign keys on and records migrations in the ledger', async () => {
    const store = createSqliteStore({ path, clock });
    await store.ping();
    await store.close();
    const db = new Database(path, { readonly: true });
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.prepare('SELECT version, name, applied_at FROM rouse_migrations').all()).toEqual(
        SQLITE_MIGRATIONS.map((m) => ({ version: m.version, name: m.name, applied_at: T0 })),
      );
    } finally {
      db.close();
    }
  });

  it('checkpoints at commit in small steps when asked to: it never holds much more than 250 pages', async () => {
    const store = createSqliteStore({ path, clock, checkpoints: 'commit' });
    let written = 0;
    let most = 0;
    try {
      for (let i = 0; written < 4 * WAL_AUTOCHECKPOINT_PAGES; i++) {
        const before = walIndex(path).frames;
        await store.createTasks([newTask(`tsk_${i}`)]);
        const after = walIndex(path).frames;
        written += after > before ? after - before : after;
        most = Math.max(most, after);
      }
    } finally {
      await store.close();
    }
    expect(most).toBeGreaterThanOrEqual(WAL_AUTOCHECKPOINT_PAGES);
    expect(most).toBeLessThan(WAL_AUTOCHECKPOINT_PAGES + 50);
  });

  it('checkpoints on a thread of its own by default: commits leave the WAL to it', async () => {
    const store = createSqliteStore({ path, clock });
    let most = 0;
    try {
      // Far fewer pages than the commits' own threshold: anything copied, the thread copied.
      for (let i = 0; walIndex(path).frames < 3 * WAL_AUTOCHECKPOINT_PAGES; i++) {
        await store.createTasks([newTask(`tsk_${i}`)]);
        most = Math.max(most, walIndex(path).frames);
      }
      expect(most).toBeLessThan(WAL_BACKSTOP_PAGES);
      const copied = await waitFor(() => walIndex(path).copied || false, {
        timeoutMs: 5000,
        intervalMs: 10,
        what: 'frames copied by the checkpoint thread',
      });
      expect(copied).toBeGreaterThanOrEqual(WAL_AUTOCHECKPOINT_PAGES);
    } finally {
      await store.close();
    }
    // Closing stopped the thread first: the last connection to close removed the WAL.
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it('writes about one WAL page per agent heartbeat: the new leases of a commit share the index page', async () => {
    const store = createSqliteStore({ path, clock });
    const ids = Array.from({ length: 4000 }, (_, i) => `agt_${i}`); // an index of many pages: every shard its own
    const frames = (): number => walIndex(path).frames;
    let pages = 0;
    let beats = 0;
    try {
      for (const id of ids) await store.registerAgent(newAgent(id));
      for (let round = 0; round < 2; round++) {
        clock.advance(5000);
        for (let k = 0; k < 200; k++) {
          // 20 agents far apart, as a fleet's beats arrive: their rows are on different pages.
          const batch = Array.from({ length: 20 }, (_, j) => ids[j * 200 + k] as string);
          clock.advance(1);
          const before = frames();
          await store.recordAgentHeartbeats(batch.map((id) => beat(id)));
          const after = frames();
          if (round === 0 || after < before) continue; // a checkpoint restarted the WAL: not counted
          pages += after - before;
          beats += 20;
        }
      }
    } finally {
      await store.close();
    }
    // One table page per beat (rows of different agents), plus a few index pages per commit; keyed by
    // (shard, lease) the index cost a page per beat more.
    expect(beats).toBeGreaterThan(3000);
    expect(pages / beats).toBeLessThan(1.5);
  });

  it('finds due agent leases through the lease index, in deadline order', async () => {
    const store = createSqliteStore({ path, clock });
    await store.close();
    const db = new Database(path, { readonly: true });
    try {
      const plan = (
        db
          .prepare(`EXPLAIN QUERY PLAN ${WATCHDOG_SQL.dueAgentLeases}`)
          .all({ dueBy: T0, shards: '[0,1]' }) as { detail: string }[]
      )
        .map((r) => r.detail)
        .join('\n');
      expect(plan).toMatch(/USING INDEX agents_leases/);
      expect(plan).not.toMatch(/TEMP B-TREE/);
    } finally {
      db.close();
    }
  });

  it('lists a status other than completed through the status index', async () => {
    const store = createSqliteStore({ path, clock });
    await store.createTasks(Array.from({ length: 50 }, (_, i) => newTask(`tsk_${i}`)));
    await store.close();
    const db = new Database(path, { readonly: true });
    try {
      const plan = (sql: string) =>
        (
          db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all({ ...LIST_PARAMS, status: 'running' }) as {
            detail: string;
          }[]
        )
          .map((r) => r.detail)
          .join('\n');
      expect(plan(TASK_SQL.listTasksOfStatus)).toMatch(/USING INDEX tasks_status/);
      expect(plan(TASK_SQL.listTasksOfStatus)).not.toMatch(/TEMP B-TREE/);
    } finally {
      db.close();
    }
  });

  it('keeps the data when a file is reopened, and does not migrate it twice', async () => {
    const first = createSqliteStore({ path, clock });
    await first.createTasks([newTask('tsk_1'), newTask('tsk_2', { idempotencyKey: 'k' })]);
    const [claimed] = await first.claimTasks({
      agentId: 'agt_a',
      types: ['work'],
      max: 1,
      start: true,
      backoff: BACKOFF,
    });
    await first.close();

    clock.advance(1000);
    const second = createSqliteStore({ path, clock });
    try {
      expect(await second.getTask('tsk_1')).toEqual(claimed!.task);
      expect(await second.listTaskEvents('tsk_1')).toHaveLength(3);
      expect(await second.activeLeases()).toHaveLength(1);
      const [dedup] = await second.createTasks([
        newTask('tsk_3', { idempotencyKey: 'k', payload: { id: 'tsk_2' } }),
      ]);
      expect(dedup).toMatchObject({ deduplicated: true, task: { id: 'tsk_2' } });
    } finally {
      await second.close();
    }
    const db = new Database(path, { readonly: true });
    try {
      expect(db.prepare('SELECT COUNT(*) AS n FROM rouse_migrations').get()).toEqual({
        n: SQLITE_MIGRATIONS.length,
      });
    } finally {
      db.close();
    }
  });

  it('stores no row for a creation, one for a claim and its start, and reads what earlier builds stored', async () => {
    const store = createSqliteStore({ path, clock });
    const db = new Database(path);
    try {
      await checkHistoryStorage(store, {
        rows: async () =>
          db.prepare('SELECT task_id, seq, to_status FROM task_events ORDER BY task_id, seq').raw().all() as [
            string,
            number,
            string,
          ][],
        storeLegacy: async (taskId, e) => {
          db.prepare(
            `INSERT INTO task_events (task_id, seq, at, from_status, to_status, version, attempt, actor, reason, details)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
          ).run(taskId, e.seq, e.at, e.from, e.to, e.version, e.attempt, e.actor, e.reason);
        },
      });
    } finally {
      db.close();
      await store.close();
    }
  });

  it('refuses a database whose schema is newer than this build, naming both versions', async () => {
    const store = createSqliteStore({ path, clock });
    await store.close();
    const db = new Database(path);
    db.prepare('INSERT INTO rouse_migrations (version, name, applied_at) VALUES (99, ?, 0)').run(
      '0099_future',
    );
    db.close();
    let err: unknown;
    try {
      createSqliteStore({ path, clock });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RouseError);
    expect((err as RouseError).code).toBe('unavailable');
    expect((err as RouseError).message).toContain('version 99');
    expect((err as RouseError).message).toContain(`version ${SQLITE_MIGRATIONS.length}`);
  });

  it('refuses a ledger that names a migration differently', () => {
    const db = new Database(':memory:');
    try {
      migrateSqlite(db, clock);
      db.prepare('UPDATE rouse_migrations SET name = ? WHERE version = 1').run('0001_other');
      expect(() => migrateSqlite(db, clock)).toThrow(/0001_other/);
    } finally {
      db.close();
    }
  });

  it('applies all pending migrations in one transaction: a failing one leaves nothing behind', () => {
    const db = new Database(':memory:');
    try {
      const broken: SqliteMigration[] = [
        ...SQLITE_MIGRATIONS,
        { version: SQLITE_MIGRATIONS.length + 1, name: 'good', sql: () => 'CREATE TABLE extra (x INTEGER)' },
        { version: SQLITE_MIGRATIONS.length + 2, name: 'bad', sql: () => 'CREATE TABLE broken (' },
      ];
      expect(() => migrateSqlite(db, clock, broken)).toThrow();
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all();
      expect(tables).toEqual([]);
      const report = migrateSqlite(db, clock, broken.slice(0, -1));
      expect(report).toEqual({
        fromVersion: 0,
        toVersion: SQLITE_MIGRATIONS.length + 1,
        applied: [...SQLITE_MIGRATIONS.map((m) => m.name), 'good'],
      });
      expect(migrateSqlite(db, clock, broken.slice(0, -1)).applied).toEqual([]);
    } finally {
      db.close();
    }
  });

  it('0010 turns an agent’s JSON sample ring into an empty binary one; the agent keeps working', async () => {
    const db = new Database(path);
    const before = SQLITE_MIGRATIONS.findIndex((m) => m.name === '0010_sample_ring_blob');
    migrateSqlite(db, clock, SQLITE_MIGRATIONS.slice(0, before));
    db.prepare(
      `INSERT INTO agents (id, agent_type, name, task_types, labels, token_hash, registered_at, samples)
       VALUES ('agt_old', 'w', 'old', '[]', '{}', 'h', ?, '[[1,2,3,null]]')`,
    ).run(T0);
    db.close();
    const store = createSqliteStore({ path, clock });
    try {
      const [watch] = await store.getAgentWatches(['agt_old']);
      expect(watch?.samples.toArray()).toEqual([]);
      const [beaten] = await store.recordAgentHeartbeats([
        beat('agt_old', { sample: { rssBytes: 5, cpuPercent: null, iterationMs: 7.5 } }),
      ]);
      expect(beaten?.watch.samples.toArray()).toEqual([[T0, 5, null, 7.5]]);
    } finally {
      await store.close();
    }
  });

  it('0019 moves each task’s timing from its JSON object into columns; the store goes on using it', async () => {
    const db = new Database(path);
    const before = SQLITE_MIGRATIONS.findIndex((m) => m.name === '0019_tasks_rebuild');
    migrateSqlite(db, clock, SQLITE_MIGRATIONS.slice(0, before));
    const insert = db.prepare(
      `INSERT INTO tasks (id, type, status, payload, priority, run_at, max_attempts, resumable, requires, labels,
                          timing, created_at)
       VALUES (?, 'work', 'created', '{}', 0, ?, 3, 0, '[]', '{}', ?, ?)`,
    );
    for (const [id, timing] of Object.entries(LEGACY_TIMINGS)) insert.run(id, T0, JSON.stringify(timing), T0);
    db.close();
    const store = createSqliteStore({ path, clock });
    try {
      await checkMigratedTimings(store, T0);
    } finally {
      await store.close();
    }
  });

  it('0019 rebuilds the tasks table: every row, history entry and log line kept; keys unique where set', async () => {
    const db = new Database(path);
    const before = SQLITE_MIGRATIONS.findIndex((m) => m.name === '0019_tasks_rebuild');
    migrateSqlite(db, clock, SQLITE_MIGRATIONS.slice(0, before));
    const timing = JSON.stringify(LEGACY_TIMINGS.tsk_legacy_a);
    const insert = db.prepare(
      `INSERT INTO tasks (seq, id, type, status, payload, idempotency_key, priority, run_at, max_attempts, resumable,
                          requires, labels, timing, created_at, shard, agent_id, version, attempt, lease_expires_at,
                          event_count)
       VALUES (?, ?, 'work', ?, '{"n":1}', ?, ?, ?, 3, 0, '[]', ?, ?, ?, 0, ?, ?, ?, ?, ?)`,
    );
    insert.run(10, 'tsk_k1', 'created', 'k1', 0, T0, '{"team":"a"}', timing, T0, null, 0, 0, null, 1);
    insert.run(11, 'tsk_k2', 'created', 'k2', 0, T0, '{}', timing, T0, null, 0, 0, null, 1);
    insert.run(12, 'tsk_n1', 'running', null, 0, T0, '{}', timing, T0, 'agt_a', 1, 1, T0 + 9000, 3);
    insert.run(13, 'tsk_n2', 'created', null, 3, T0 + 60_000, '{}', timing, T0, null, 0, 0, null, 1);
    db.prepare(
      `INSERT INTO task_events (task_id, seq, at, from_status, to_status, version, attempt, actor, reason)
       VALUES ('tsk_n1', 2, ?, 'created', 'claimed', 1, 1, 'agent:agt_a', 'claimed'),
              ('tsk_n1', 3, ?, 'claimed', 'running', 1, 1, 'agent:agt_a', 'started')`,
    ).run(T0, T0);
    db.prepare(
      "INSERT INTO task_logs (task_id, seq, attempt, at, stream, text) VALUES ('tsk_n1', 1, 1, ?, 'stdout', 'hello')",
    ).run(T0);
    // Every column but the timing, as the old table held it.
    const columns = TASK_COLUMN_NAMES.filter((c) => !(TIMING_COLUMN_NAMES as readonly string[]).includes(c));
    const rows = () => db.prepare(`SELECT ${columns.join(', ')} FROM tasks ORDER BY seq`).all();
    const history = () => db.prepare('SELECT * FROM task_events ORDER BY task_id, seq').all();
    const logs = () => db.prepare('SELECT * FROM task_logs ORDER BY task_id, seq').all();
    const was = { rows: rows(), history: history(), logs: logs() };

    migrateSqlite(db, clock);
    expect({ rows: rows(), history: history(), logs: logs() }).toEqual(was);
    expect(
      db
        .prepare(`SELECT DISTINCT ${TIMING_COLUMN_NAMES.join(', ')} FROM tasks`)
        .raw()
        .all(),
    ).toEqual([[4000, 12_000, 20_000, null, null, 100_000, null]]);
    expect(db.pragma('foreign_key_check')).toEqual([]);
    const indexes = db.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tasks' ORDER BY name",
    );
    expect(indexes.all().map((r) => (r as { name: string }).name)).toEqual([
      'sqlite_autoindex_tasks_1',
      'tasks_claim',
      'tasks_deferred',
      'tasks_held',
      'tasks_idempotency_key',
      'tasks_leases',
      'tasks_status',
    ]);
    expect(() => db.prepare("UPDATE tasks SET idempotency_key = 'k1' WHERE id = 'tsk_k2'").run()).toThrow(
      /UNIQUE/,
    );
    db.close();

    const store = createSqliteStore({ path, clock });
    try {
      // A key stays unique; tasks without one do not collide; new tasks continue the sequence.
      const again = await store.createTasks([
        newTask('tsk_k1b', { idempotencyKey: 'k1', payload: { n: 1 } }),
        newTask('tsk_n3'),
      ]);
      expect(again.map((r) => [r.task.id, r.deduplicated])).toEqual([
        ['tsk_k1', true],
        ['tsk_n3', false],
      ]);
      const page = await store.listTasks({ limit: 10 });
      expect(page.tasks.map((t) => t.id)).toEqual(['tsk_n3', 'tsk_n2', 'tsk_n1', 'tsk_k2', 'tsk_k1']);
      expect(await store.listTaskEvents('tsk_n1')).toHaveLength(3);
      expect(await store.readLogs('tsk_n1', 0, 10)).toEqual([
        { seq: 1, at: T0, attempt: 1, stream: 'stdout', text: 'hello' },
      ]);
      // Claimable in order through the rebuilt claim index (tsk_n2 is not due yet).
      const next = await store.claimTasks({
        agentId: 'agt_b',
        types: ['work'],
        max: 5,
        start: false,
        backoff: BACKOFF,
      });
      expect(next.map((c) => c.task.id)).toEqual(['tsk_k1', 'tsk_k2', 'tsk_n3']);
    } finally {
      await store.close();
    }
  });

  it('rolls a migration back when it leaves a reference pointing nowhere, and keeps foreign keys on', async () => {
    const store = createSqliteStore({ path, clock });
    await store.createTasks([newTask('tsk_1')]);
    await store.claimTasks({ agentId: 'agt_a', types: ['work'], max: 1, start: true, backoff: BACKOFF });
    await store.close();
    const db = new Database(path);
    try {
      db.pragma('foreign_keys = ON');
      const dangling: SqliteMigration[] = [
        ...SQLITE_MIGRATIONS,
        {
          version: SQLITE_MIGRATIONS.length + 1,
          name: 'dangling',
          sql: () => "DELETE FROM tasks WHERE id = 'tsk_1'",
        },
      ];
      expect(() => migrateSqlite(db, clock, dangling)).toThrow(
        expect.objectContaining({ code: 'unavailable', message: expect.stringContaining('task_events') }),
      );
      expect(db.prepare('SELECT id FROM tasks').all()).toEqual([{ id: 'tsk_1' }]);
      expect(db.prepare('SELECT COUNT(*) AS n FROM rouse_migrations').get()).toEqual({
        n: SQLITE_MIGRATIONS.length,
      });
      expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    } finally {
      db.close();
    }
  });

  it('rejects a registry whose versions are not 1, 2, 3 … in order', () => {
    const db = new Database(':memory:');
    try {
      const gap: SqliteMigration[] = [
        ...SQLITE_MIGRATIONS,
        { version: SQLITE_MIGRATIONS.length + 2, name: 'gap', sql: () => '' },
      ];
      expect(() => migrateSqlite(db, clock, gap)).toThrow(`expected ${SQLITE_MIGRATIONS.length + 1}`);
    } finally {
      db.close();
    }
  });

  it('shares one file between two connections without double claims', async () => {
    const a = createSqliteStore({ path, clock });
    const b = createSqliteStore({ path, clock });
    try {
      await a.createTasks(Array.from({ length: 20 }, (_, i) => newTask(`tsk_${i}`)));
      const claims = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 === 0 ? a : b).claimTasks({
            agentId: `agt_${i}`,
            types: ['work'],
            max: 3,
            start: false,
            backoff: BACKOFF,
          }),
        ),
      );
      const ids = claims.flat().map((c) => c.task.id);
      expect(ids).toHaveLength(20);
      expect(new Set(ids).size).toBe(20);
      expect((await b.listTasks({ statuses: ['claimed'], limit: 50 })).tasks).toHaveLength(20);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('answers unavailable once closed, and rejects bad options naming the option', async () => {
    const store = createSqliteStore({ path: ':memory:', clock });
    await store.close();
    await expect(store.ping()).rejects.toMatchObject({ code: 'unavailable' });
    await expect(store.getTask('x')).rejects.toMatchObject({ code: 'unavailable' });
    await store.close();
    expect(() => createSqliteStore({ path: '', clock })).toThrow(/path/);
    expect(() => createSqliteStore({ path: ':memory:', clock, busyTimeoutMs: -1 })).toThrow(/busyTimeoutMs/);
    expect(() => createSqliteStore({ path: ':memory:', clock, cacheSizeKiB: 10 })).toThrow(/cacheSizeKiB/);
    // @ts-expect-error: not one of the two
    expect(() => createSqliteStore({ path: ':memory:', clock, checkpoints: 'later' })).toThrow(/checkpoints/);
    expect(() => createSqliteStore({ path: join(dir, 'missing', 'deeper', 'x.db'), clock })).toThrow(
      expect.objectContaining({ code: 'unavailable' }),
    );
  });
});
