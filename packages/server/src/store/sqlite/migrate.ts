/**
 * SQLite schema migrations: numbered SQL files listed in one ordered registry, recorded in the
 * `rouse_migrations` ledger. All pending migrations run in one `BEGIN IMMEDIATE` transaction, which
 * also holds SQLite's write lock (the advisory lock of a single-file database), so two processes
 * opening the same file cannot both migrate it.
 */
import { readFileSync } from 'node:fs';
import type Database from 'better-sqlite3';
import type { Clock } from '../../core/clock.js';
import { RouseError } from '../../core/errors.js';
import { shardOf } from '../lease-shards.js';

export interface SqliteMigration {
  /** 1, 2, 3 … with no gaps. */
  version: number;
  name: string;
  /** The migration's SQL (read lazily, never at import time). */
  sql: () => string;
}

function migrationFile(file: string): () => string {
  return () => readFileSync(new URL(`./migrations/${file}`, import.meta.url), 'utf8');
}

/** The schema, in order. Append, never edit or reorder: databases record what they ran. */
export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = [
  { version: 1, name: '0001_init', sql: migrationFile('0001_init.sql') },
  { version: 2, name: '0002_lease_shards', sql: migrationFile('0002_lease_shards.sql') },
  { version: 3, name: '0003_coordinators', sql: migrationFile('0003_coordinators.sql') },
];

export interface MigrationReport {
  /** Schema version before (0 for a new database). */
  fromVersion: number;
  toVersion: number;
  applied: string[];
}

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
  for (const [i, m] of migrations.entries()) {
    if (m.version !== i + 1) {
      throw new RouseError(
        'internal',
        `migration ${m.name} has version ${m.version}, expected ${i + 1}: versions run 1, 2, 3 … in order`,
      );
    }
  }
  const codeVersion = migrations.at(-1)?.version ?? 0;
  // 0002 computes the lease shard of existing tasks with the same function new inserts use.
  db.function('rouse_shard_of', { deterministic: true }, (id: unknown) => shardOf(String(id)));
  const run = db.transaction((): MigrationReport => {
    db.exec(CREATE_LEDGER);
    const recorded = db.prepare('SELECT version, name FROM rouse_migrations ORDER BY version').all() as {
      version: number;
      name: string;
    }[];
    const dbVersion = recorded.at(-1)?.version ?? 0;
    if (dbVersion > codeVersion) {
      throw new RouseError(
        'unavailable',
        `the database schema is at version ${dbVersion} but this build of rouse knows only up to version ${codeVersion}; run a newer rouse against this database`,
        { databaseVersion: dbVersion, codeVersion },
      );
    }
    for (const row of recorded) {
      const known = migrations.find((m) => m.version === row.version);
      if (known?.name !== row.name) {
        throw new RouseError(
          'unavailable',
          `the database records migration ${row.version} as ${row.name} but this build calls it ${known?.name ?? '(missing)'}; it was written by a different build of rouse`,
          { version: row.version, databaseName: row.name, codeName: known?.name ?? null },
        );
      }
    }
    const record = db.prepare('INSERT INTO rouse_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    const applied: string[] = [];
    for (const m of migrations) {
      if (m.version <= dbVersion) continue;
      db.exec(m.sql());
      record.run(m.version, m.name, clock.now());
      applied.push(m.name);
    }
    return { fromVersion: dbVersion, toVersion: Math.max(dbVersion, codeVersion), applied };
  });
  return run.immediate();
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
  const codeVersion = migrations.at(-1)?.version ?? 0;
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
    codeVersion,
    applied,
    pending: migrations.filter((m) => m.version > databaseVersion).map((m) => m.name),
  };
}
