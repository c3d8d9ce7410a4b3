/**
 * PostgreSQL for tests: the run's shared server (postgres-global-setup.ts), with a fresh schema or a
 * fresh database per test file or test, so nothing leaks between tests. Also a private server for
 * tests that stop PostgreSQL on purpose.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { type EmbeddedOptions, type EmbeddedServer, startEmbeddedPostgres } from './embedded-postgres.mjs';

/** The shared server's URL; throws (failing the test) when there is none. */
export function databaseUrl(): string {
  const url = inject('databaseUrl');
  if (!url) throw new Error(inject('databaseUrlError') || 'no PostgreSQL for tests: set DATABASE_URL');
  return url;
}

function uniqueName(prefix: string): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

async function admin<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface FreshSchema {
  connectionString: string;
  /** Not created yet: the store's first migration creates it. */
  schema: string;
  /** Drop the schema and everything in it. */
  drop(): Promise<void>;
}

/** A schema name of its own on the shared server (created by the first migration, dropped by `drop`). */
export async function freshSchema(prefix = 't'): Promise<FreshSchema> {
  const connectionString = databaseUrl();
  const schema = uniqueName(prefix);
  return {
    connectionString,
    schema,
    drop: () =>
      admin(connectionString, (c) => c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)).then(
        () => undefined,
      ),
  };
}

export interface FreshDatabase {
  /** The new database's URL. */
  connectionString: string;
  database: string;
  /** Drop the database (closing whatever is still connected to it). */
  drop(): Promise<void>;
}

/** A database of its own on the shared server. */
export async function freshDatabase(prefix = 'd'): Promise<FreshDatabase> {
  const url = databaseUrl();
  const database = uniqueName(prefix);
  await admin(url, (c) => c.query(`CREATE DATABASE "${database}"`));
  const u = new URL(url);
  u.pathname = `/${database}`;
  return {
    connectionString: u.toString(),
    database,
    drop: () =>
      admin(url, (c) => c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`)).then(() => undefined),
  };
}

export interface PrivatePostgres extends EmbeddedServer {
  /** Stop the server and remove its files. */
  destroy(): Promise<void>;
}

/**
 * A PostgreSQL server of the test's own (about a second to start), for tests that stop and restart
 * it. Ignores DATABASE_URL: a shared server must not be stopped.
 */
export async function privatePostgres(options: EmbeddedOptions = {}): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'rouse-pg-private-'));
  chmodSync(dir, 0o755);
  const server = await startEmbeddedPostgres(join(dir, 'data'), options);
  return {
    ...server,
    async destroy() {
      await server.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
