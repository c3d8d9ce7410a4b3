/**
 * PostgreSQL schema migrations: numbered SQL files listed in one ordered registry, recorded in the
 * `rouse_migrations` ledger of the Rouse schema. All pending migrations run in ONE transaction under
 * a transaction-level advisory lock (per schema), so coordinators starting together migrate once and
 * a failing migration leaves nothing behind. A database recorded by a newer build is refused.
 */
import pg from 'pg';
import {
  checkLedger,
  checkRegistry,
  type Migration,
  type MigrationReport,
  migrationsIn,
} from '../migrations.js';
import { pgConfig } from './postgres-context.js';
import { toStoreError } from './postgres-errors.js';
import {
  type PostgresConnectionOptions,
  type ResolvedPostgresConnectionOptions,
  resolvePostgresConnectionOptions,
} from './postgres-options.js';

export type PostgresMigration = Migration;
export type PostgresMigrationReport = MigrationReport;

/** The schema, in order. Append, never edit or reorder: databases record what they ran. */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = migrationsIn(import.meta.url, [
  '0001_init',
  '0002_coordinators',
  '0003_result_blobs',
  '0004_status_index',
  '0005_agent_commands',
  '0006_dependencies',
  '0007_coordinator_listening',
  '0008_coordinator_instance',
  '0009_watchdog',
  '0010_task_effects',
  '0011_interventions',
  '0012_agent_snapshots',
  '0013_alerts',
  '0014_task_blobs',
  '0015_dashboard_sessions',
  '0016_timing_columns',
  '0017_task_index_trim',
  '0018_coordinator_tokens',
]);

export interface PostgresMigrationStatus {
  /** Schema version the database records (0: never migrated). */
  databaseVersion: number;
  /** Newest migration this build knows. */
  codeVersion: number;
  applied: { version: number; name: string; appliedAt: number }[];
  pending: string[];
}

/** First key of the advisory lock (`'ROUS'`); the second is the schema's hash. */
const LOCK_KEY = 0x524f5553;

const CREATE_LEDGER = `
  CREATE TABLE IF NOT EXISTS rouse_migrations (
    version    integer PRIMARY KEY,
    name       text    NOT NULL,
    applied_at bigint  NOT NULL
  )`;

/**
 * Bring `schema` up to the newest migration on an open connection (one transaction, advisory lock).
 * `now` stamps the ledger (null: the database's clock).
 */
export async function migrateOnClient(
  client: pg.ClientBase,
  schema: string,
  now: number | null = null,
  migrations: readonly PostgresMigration[] = POSTGRES_MIGRATIONS,
): Promise<PostgresMigrationReport> {
  const codeVersion = checkRegistry(migrations);
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_KEY, schema]);
    const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (exists.rowCount === 0) await client.query(`CREATE SCHEMA "${schema}"`);
    await client.query(`SET LOCAL search_path TO "${schema}"`);
    await client.query(CREATE_LEDGER);
    const recorded = (await client.query('SELECT version, name FROM rouse_migrations ORDER BY version'))
      .rows as {
      version: number;
      name: string;
    }[];
    const dbVersion = checkLedger(recorded, migrations);
    const applied: string[] = [];
    for (const m of migrations) {
      if (m.version <= dbVersion) continue;
      await client.query(m.sql());
      await client.query(
        `INSERT INTO rouse_migrations (version, name, applied_at)
         VALUES ($1, $2, COALESCE($3::bigint, floor(extract(epoch FROM now()) * 1000)::bigint))`,
        [m.version, m.name, now],
      );
      applied.push(m.name);
    }
    await client.query('COMMIT');
    return { fromVersion: dbVersion, toVersion: Math.max(dbVersion, codeVersion), applied };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** The ledger of `schema` on an open connection; empty when the schema was never migrated. */
export async function ledgerOnClient(
  client: pg.ClientBase,
  schema: string,
): Promise<{ version: number; name: string; appliedAt: number }[]> {
  const found = await client.query('SELECT to_regclass($1) IS NOT NULL AS found', [
    `"${schema}".rouse_migrations`,
  ]);
  if (!found.rows[0]?.found) return [];
  const rows = await client.query(
    `SELECT version, name, applied_at FROM "${schema}".rouse_migrations ORDER BY version`,
  );
  return rows.rows.map((r: { version: number; name: string; applied_at: number }) => ({
    version: r.version,
    name: r.name,
    appliedAt: r.applied_at,
  }));
}

async function withClient<T>(
  opts: ResolvedPostgresConnectionOptions,
  fn: (c: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client(pgConfig(opts));
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await fn(client);
  } catch (err) {
    throw toStoreError(err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** `rouse migrate`: apply every pending migration to the schema (creating it if needed). */
export function migratePostgres(
  options: PostgresConnectionOptions,
  migrations: readonly PostgresMigration[] = POSTGRES_MIGRATIONS,
): Promise<PostgresMigrationReport> {
  const opts = resolvePostgresConnectionOptions(options);
  return withClient(opts, (c) => migrateOnClient(c, opts.schema, null, migrations));
}

/** `rouse migrate --status`: the ledger against this build's registry. Reads only. */
export function postgresMigrationStatus(
  options: PostgresConnectionOptions,
  migrations: readonly PostgresMigration[] = POSTGRES_MIGRATIONS,
): Promise<PostgresMigrationStatus> {
  const opts = resolvePostgresConnectionOptions(options);
  return withClient(opts, async (c) => {
    const applied = await ledgerOnClient(c, opts.schema);
    const databaseVersion = applied.at(-1)?.version ?? 0;
    return {
      databaseVersion,
      codeVersion: migrations.at(-1)?.version ?? 0,
      applied,
      pending: migrations.filter((m) => m.version > databaseVersion).map((m) => m.name),
    };
  });
}
