/**
 * SQLite schema migrations: numbered SQL files listed in one ordered registry, recorded in the
 * `rouse_migrations` ledger. All pending migrations run in one `BEGIN IMMEDIATE` transaction, which
 * also holds SQLite's write lock (the advisory lock of a single-file database), so two processes
 * opening the same file cannot both migrate it.
 *
 * Foreign keys are off while they run (SQLite allows switching them only outside a transaction), so
 * that a migration can rebuild a table others refer to: copy it, drop it, rename the copy. Every
 * reference is checked (`foreign_key_check`) before a transaction that applied any commits; one that
 * points nowhere rolls the whole migration back.
 */
import type Database from 'better-sqlite3';
import type { Clock } from '../../core/clock.js';
import { UnavailableError } from '../../core/errors.js';
import { shardOf } from '../lease-shards.js';
import {
  checkLedger,
  checkRegistry,
  type Migration,
  type MigrationReport,
  migrationsIn,
} from '../migrations.js';

export type SqliteMigration = Migration;
export type { MigrationReport };

/** The schema, in order. Append, never edit or reorder: databases record what they ran. */
export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = migrationsIn(import.meta.url, [
  '0001_init',
  '0002_lease_shards',
  '0003_coordinators',
  '0004_status_index',
  '0005_agent_commands',
  '0006_dependencies',
  '0007_coordinator_listening',
  '0008_coordinator_instance',
  '0009_watchdog',
  '0010_sample_ring_blob',
  '0011_task_effects',
  '0012_interventions',
  '0013_agent_snapshots',
  '0014_alerts',
  '0015_agent_lease_index',
  '0016_task_blobs',
  '0017_dashboard_sessions',
  '0018_task_index_trim',
  '0019_tasks_rebuild',
  '0020_coordinator_tokens',
]);

const CREATE_LEDGER = `
  CREATE TABLE IF NOT EXISTS rouse_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    applied_at INTEGER NOT NULL
  )`;

/**
 * Bring `db` up to the newest migration. Refuses (`unavailable`) a database whose ledger records a
 * version this build does not know, or a migration under another name: it was written by a different
 * build of Rouse, and running against it could corrupt it.
 */
export function migrateSqlite(
  db: Database.Database,
  clock: Clock,
  migrations: readonly SqliteMigration[] = SQLITE_MIGRATIONS,
): MigrationReport {
  checkRegistry(migrations);
  // 0002 computes the lease shard of existing tasks with the same function new inserts use.
  db.function('rouse_shard_of', { deterministic: true }, (id: unknown) => shardOf(String(id)));
  const run = db.transaction((): MigrationReport => {
    const report = applyPending(db, clock, migrations);
    // Only after a migration ran: the check reads every reference in the file (2 s cold for 200,000
    // tasks), and an open that applies nothing has changed none.
    if (report.applied.length === 0) return report;
    const dangling = db.pragma('foreign_key_check') as { table: string; parent: string }[];
    if (dangling.length > 0) {
      const { table, parent } = dangling[0]!;
      throw new UnavailableError(
        `a migration left ${dangling.length} reference(s) from ${table} to ${parent} pointing nowhere; the database was left as it was`,
        { table, parent },
      );
    }
    return report;
  });
  const foreignKeys = db.pragma('foreign_keys', { simple: true }) as number;
  db.pragma('foreign_keys = OFF');
  try {
    return run.immediate();
  } finally {
    db.pragma(`foreign_keys = ${foreignKeys ? 'ON' : 'OFF'}`);
  }
}

function applyPending(
  db: Database.Database,
  clock: Clock,
  migrations: readonly SqliteMigration[],
): MigrationReport {
  db.exec(CREATE_LEDGER);
  const recorded = db.prepare('SELECT version, name FROM rouse_migrations ORDER BY version').all() as {
    version: number;
    name: string;
  }[];
  const dbVersion = checkLedger(recorded, migrations);
  const codeVersion = migrations.at(-1)?.version ?? 0;
  const record = db.prepare('INSERT INTO rouse_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  const applied: string[] = [];
  for (const m of migrations) {
    if (m.version <= dbVersion) continue;
    db.exec(m.sql());
    record.run(m.version, m.name, clock.now());
    applied.push(m.name);
  }
  return { fromVersion: dbVersion, toVersion: Math.max(dbVersion, codeVersion), applied };
}

export interface SqliteMigrationStatus {
  /** Schema version the database records (0: never migrated). */
  databaseVersion: number;
  /** Newest migration this build knows. */
  codeVersion: number;
  applied: { version: number; name: string; appliedAt: number }[];
  pending: string[];
}

/** What `rouse migrate --status` prints: the ledger against this build's registry. Reads only. */
export function sqliteMigrationStatus(
  db: Database.Database,
  migrations: readonly SqliteMigration[] = SQLITE_MIGRATIONS,
): SqliteMigrationStatus {
  const hasLedger =
    db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rouse_migrations'").get() !==
    undefined;
  const applied = hasLedger
    ? (
        db.prepare('SELECT version, name, applied_at FROM rouse_migrations ORDER BY version').all() as {
          version: number;
          name: string;
          applied_at: number;
        }[]
      ).map((r) => ({ version: r.version, name: r.name, appliedAt: r.applied_at }))
    : [];
  const databaseVersion = applied.at(-1)?.version ?? 0;
  return {
    databaseVersion,
    codeVersion: migrations.at(-1)?.version ?? 0,
    applied,
    pending: migrations.filter((m) => m.version > databaseVersion).map((m) => m.name),
  };
}
