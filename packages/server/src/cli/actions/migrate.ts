/**
 * `rouse migrate`: apply the store's pending migrations (all in one transaction, under the store's
 * lock), or with `--status` report which are applied and which are pending. PostgreSQL (`--store
 * postgres://…`) or SQLite (`--db`, default `<data-dir>/rouse.db`). `rouse serve` migrates on start
 * unless `--no-migrate`; this is for deployments that migrate as a separate step.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import {
  describeStore,
  explainStoreOpenFailure,
  type ResolvedStoreConfig,
  resolveStoreConfig,
} from '../../server-store.js';
import { migrateSqlite, sqliteMigrationStatus } from '../../store/sqlite/migrate.js';
import { systemClock } from '../../system-clock.js';
import { type CliContext, CliError, EXIT } from '../context.js';
import { resolveDataDir } from '../data-dir.js';
import { createStyle } from '../format/style.js';
import { renderPairs } from '../format/table.js';
import { storeConfig } from '../store-config.js';
import type { StoreCliOptions } from '../store-options.js';

export interface MigrateOptions extends StoreCliOptions {
  dataDir?: string;
  db?: string;
  status?: boolean;
  json?: boolean;
}

interface Status {
  store: string;
  databaseVersion: number;
  codeVersion: number;
  applied: { version: number; name: string; appliedAt: number }[];
  pending: string[];
}

export async function migrate(ctx: CliContext, opts: MigrateOptions): Promise<number> {
  const dataDir = resolveDataDir(ctx, opts.dataDir);
  const sqlitePath = opts.db ? resolve(ctx.deps.cwd, opts.db) : resolve(dataDir, 'rouse.db');
  const config = resolveStoreConfig(storeConfig(ctx, opts), sqlitePath);
  try {
    return await migrateOrReport(ctx, opts, config);
  } catch (err) {
    // Exit 3, as for a coordinator that cannot be reached: `migrate --status` keeps 1 for "pending",
    // so that a script can tell the two apart.
    const storeFailure = explainStoreOpenFailure(err, config);
    if (storeFailure) throw new CliError(storeFailure, EXIT.unreachable);
    throw err;
  }
}

async function migrateOrReport(
  ctx: CliContext,
  opts: MigrateOptions,
  config: ResolvedStoreConfig,
): Promise<number> {
  const style = createStyle(ctx.io.color);
  if (opts.status) {
    const status = await readStatus(config);
    if (opts.json) ctx.printJson(status);
    else {
      for (const line of renderPairs(
        [
          ['store', status.store],
          ['schema version', `${status.databaseVersion} (this rouse knows ${status.codeVersion})`],
          ['applied', status.applied.map((m) => m.name).join(', ') || '(none)'],
          ['pending', status.pending.join(', ') || style.green('(none: up to date)')],
        ],
        '',
      ))
        ctx.print(line);
    }
    return status.pending.length === 0 ? EXIT.ok : EXIT.error;
  }
  const report = await apply(config);
  if (opts.json) ctx.printJson({ store: describeStore(config), ...report });
  else if (report.applied.length === 0)
    ctx.print(`${describeStore(config)}: up to date at version ${report.toVersion}`);
  else
    ctx.print(
      `${describeStore(config)}: migrated from version ${report.fromVersion} to ${report.toVersion} (${report.applied.join(', ')})`,
    );
  return EXIT.ok;
}

async function readStatus(config: ResolvedStoreConfig): Promise<Status> {
  const store = describeStore(config);
  if (config.kind === 'postgres') {
    const { postgresMigrationStatus } = await import('../../store/postgres/migrate.js');
    return { store, ...(await postgresMigrationStatus(pgConnection(config))) };
  }
  if (config.path !== ':memory:' && !existsSync(config.path)) {
    throw new CliError(
      `no SQLite database at ${config.path} (pass --db or --data-dir, or --store postgres://…)`,
    );
  }
  const db = new Database(config.path, { readonly: true, fileMustExist: true });
  try {
    return { store, ...sqliteMigrationStatus(db) };
  } finally {
    db.close();
  }
}

async function apply(config: ResolvedStoreConfig) {
  if (config.kind === 'postgres') {
    // Loaded on use: other commands do not pay for the PostgreSQL driver.
    const { migratePostgres } = await import('../../store/postgres/migrate.js');
    return migratePostgres(pgConnection(config));
  }
  if (config.path !== ':memory:') mkdirSync(dirname(config.path), { recursive: true, mode: 0o700 });
  const db = new Database(config.path);
  try {
    if (config.path !== ':memory:') db.pragma('journal_mode = WAL');
    return migrateSqlite(db, systemClock());
  } finally {
    db.close();
  }
}

function pgConnection(config: Extract<ResolvedStoreConfig, { kind: 'postgres' }>) {
  return {
    connectionString: config.connectionString,
    ...(config.schema === undefined ? {} : { schema: config.schema }),
    ...(config.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: config.connectTimeoutMs }),
    ...(config.ssl === undefined ? {} : { ssl: config.ssl }),
  };
}
