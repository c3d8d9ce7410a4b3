/**
 * What every backend's migrations share: the migration and report shapes, and the checks of the
 * registry and of a database's ledger (numbered 1, 2, 3 …; a newer or foreign ledger is refused).
 * Each backend keeps its own ordered registry of SQL files and runs them in one transaction.
 */
import { readFileSync } from 'node:fs';
import { RouseError } from '../core/errors.js';

export interface Migration {
  /** 1, 2, 3 … with no gaps. */
  version: number;
  name: string;
  /** The migration's SQL (read lazily, never at import time). */
  sql: () => string;
}

export interface MigrationReport {
  /** Schema version before (0 for a new database or schema). */
  fromVersion: number;
  toVersion: number;
  applied: string[];
}

/** A migration's SQL, read from `file` in the `migrations/` folder beside `moduleUrl` when first needed. */
function migrationFile(moduleUrl: string, file: string): () => string {
  return () => readFileSync(new URL(`./migrations/${file}`, moduleUrl), 'utf8');
}

/**
 * A backend's registry from its migration names in order (`NNNN_what`, each the file
 * `migrations/NNNN_what.sql` beside `moduleUrl`): the version is the position, 1, 2, 3 …
 */
export function migrationsIn(moduleUrl: string, names: readonly string[]): Migration[] {
  return names.map((name, i) => ({ version: i + 1, name, sql: migrationFile(moduleUrl, `${name}.sql`) }));
}

/** The code's schema version; throws when the registry is not numbered 1, 2, 3 … in order. */
export function checkRegistry(migrations: readonly Migration[]): number {
  for (const [i, m] of migrations.entries()) {
    if (m.version !== i + 1) {
      throw new RouseError(
        'internal',
        `migration ${m.name} has version ${m.version}, expected ${i + 1}: versions run 1, 2, 3 … in order`,
      );
    }
  }
  return migrations.at(-1)?.version ?? 0;
}

/**
 * Refuse a ledger this build cannot run against: a newer version, or a migration under another name
 * (written by a different build). With `requireCurrent`, also one that is behind (migrations off).
 */
export function checkLedger(
  recorded: { version: number; name: string }[],
  migrations: readonly Migration[],
  requireCurrent = false,
): number {
  const codeVersion = checkRegistry(migrations);
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
  if (requireCurrent && dbVersion < codeVersion) {
    throw new RouseError(
      'unavailable',
      `the database schema is at version ${dbVersion} but this build of rouse needs version ${codeVersion}; run \`rouse migrate\` (or start with migrations on)`,
      { databaseVersion: dbVersion, codeVersion },
    );
  }
  return dbVersion;
}
