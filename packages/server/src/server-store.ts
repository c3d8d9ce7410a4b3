/**
 * Which store a coordinator runs on: `StoreConfig → resolveStoreConfig() → ResolvedStoreConfig`, and
 * opening it. SQLite (a file in the data directory) is the default; PostgreSQL is what several
 * coordinators share (docs/design.md §8). A string is read as a URL: `postgres://…` / `postgresql://…`,
 * or `sqlite` / `sqlite:<path>`.
 */
import { join } from 'node:path';
import type { ConnectionOptions } from 'node:tls';
import type { Clock } from './core/clock.js';
import { RouseError, ValidationError } from './core/errors.js';
import { isConnectionFailure } from './store/postgres/postgres-errors.js';
import { createSqliteStore } from './store/sqlite/sqlite-store.js';
import type { Store } from './store/store.js';
import { isPostgresUrl } from './store/store-url.js';

export interface SqliteStoreConfig {
  kind: 'sqlite';
  /** A file, or ':memory:'. @default '<dataDir>/rouse.db' */
  path?: string;
}

export interface PostgresStoreConfig {
  kind: 'postgres';
  /** `postgres://user:password@host:port/database` */
  connectionString: string;
  /** Schema holding Rouse's tables. @default 'public' */
  schema?: string;
  /** Pooled connections per coordinator. @default 10 */
  poolSize?: number;
  /** Longest a statement may run; calls answer `503 unavailable` past it. @default 5000 */
  statementTimeoutMs?: number;
  /** Longest opening a connection may take. @default 5000 */
  connectTimeoutMs?: number;
  /** TLS, passed through to node-postgres (`true`, or `tls.connect` options such as `{ ca }`). */
  ssl?: boolean | ConnectionOptions;
  /** Apply pending migrations on start. @default true */
  migrate?: boolean;
}

export type StoreConfig = SqliteStoreConfig | PostgresStoreConfig;

export type ResolvedStoreConfig = Required<SqliteStoreConfig> | PostgresStoreConfig;

/** Said of a `--store` that starts like a PostgreSQL URL but is not one (never echoed: it may hold a password). */
export const INVALID_POSTGRES_URL =
  '--store is not a valid URL: expected postgres://user:password@host:5432/database (percent-encode special characters in the password)';

/** Parse `--store` / `ROUSE_STORE`, or take a config object; `sqlitePath` is the SQLite default. */
export function resolveStoreConfig(
  store: string | StoreConfig | undefined,
  sqlitePath: string,
): ResolvedStoreConfig {
  if (store === undefined) return { kind: 'sqlite', path: sqlitePath };
  if (typeof store === 'string') {
    const s = store.trim();
    if (isPostgresUrl(s)) return { kind: 'postgres', connectionString: s };
    if (s === 'sqlite') return { kind: 'sqlite', path: sqlitePath };
    if (s.startsWith('sqlite:') && s.length > 'sqlite:'.length) return { kind: 'sqlite', path: s.slice(7) };
    throw new ValidationError(
      'store',
      "must be a postgres:// (or postgresql://) URL, 'sqlite', or 'sqlite:<path>'",
    );
  }
  if (store.kind === 'sqlite') {
    const path = store.path ?? sqlitePath;
    if (typeof path !== 'string' || path === '')
      throw new ValidationError('store.path', "must be a file path or ':memory:'");
    return { kind: 'sqlite', path };
  }
  if (store.kind === 'postgres') {
    if (typeof store.connectionString !== 'string' || !isPostgresUrl(store.connectionString)) {
      throw new ValidationError('store.connectionString', 'must be a postgres:// or postgresql:// URL');
    }
    return { ...store };
  }
  throw new ValidationError('store.kind', "must be 'sqlite' or 'postgres'");
}

/** Where the store is, without secrets (for banners and logs). */
export function describeStore(config: ResolvedStoreConfig): string {
  if (config.kind === 'sqlite')
    return config.path === ':memory:'
      ? 'SQLite :memory: (nothing survives a restart)'
      : `SQLite ${config.path}`;
  let where = config.connectionString;
  try {
    const u = new URL(config.connectionString);
    if (u.password) u.password = '***';
    where = u.toString();
  } catch {
    where = 'postgres://(unparsable URL)';
  }
  return `PostgreSQL ${where}${config.schema ? ` schema ${config.schema}` : ''}`;
}

/** What the driver said under a store error: its code (an errno name or SQLSTATE) and message. */
function driverFailure(err: unknown): { code: string; said: string } {
  const driver = (err instanceof RouseError && err.cause !== undefined ? err.cause : err) as {
    code?: unknown;
    message?: unknown;
  } | null;
  return {
    code: typeof driver?.code === 'string' ? driver.code : '',
    said: typeof driver?.message === 'string' ? driver.message : String(driver),
  };
}

/**
 * Why the store could not be opened, for the person starting a coordinator or running `rouse
 * migrate`: which server, what it said, and what to check. Null when `err` is not one of the
 * failures to open a PostgreSQL store recognised here (the caller reports it as it is).
 */
export function explainStoreOpenFailure(err: unknown, config: StoreConfig | undefined): string | null {
  if (config?.kind !== 'postgres') return null;
  const { code, said } = driverFailure(err);
  let u: URL;
  try {
    u = new URL(config.connectionString);
  } catch {
    return INVALID_POSTGRES_URL;
  }
  if (code === 'ERR_INVALID_URL') return INVALID_POSTGRES_URL;
  const at = `PostgreSQL at ${u.hostname || 'localhost'}:${u.port || '5432'}`;
  const user = decodeURIComponent(u.username) || '(default user)';
  const database = decodeURIComponent(u.pathname.slice(1)) || user;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return `cannot resolve the host of ${at} (${code}): check the host name in --store`;
  if (code === 'ECONNREFUSED')
    return `cannot reach ${at} (${code}): is PostgreSQL running there, and are the host and port in --store right?`;
  if (code === 'ETIMEDOUT' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || /timeout/i.test(said))
    return `${at} did not answer in time (${code || said}): check the host and port in --store, the network, or raise --connect-timeout`;
  if (code.startsWith('28') && /no encryption/i.test(said))
    return `${at} takes only TLS connections (${code}: ${said}): pass --pg-ssl, or --pg-ssl-ca <file> for a private CA`;
  if (code.startsWith('28'))
    return `${at} refused user "${user}" (${code}: ${said}): check the user and password in --store`;
  if (code === '3D000')
    return `${at} has no database "${database}" (${code}): create it (\`createdb ${database}\`) or name another in --store`;
  if (code === '42501')
    return `user "${user}" may not do what Rouse needs on ${at} (${code}: ${said}): it must be able to create tables in the schema (or run \`rouse migrate\` as a user that can)`;
  if (/\b(ssl|tls|certificate)\b/i.test(said))
    return `TLS to ${at} failed: ${said}. Check --pg-ssl, --pg-ssl-ca (or --pg-ssl-insecure for testing) and sslmode in --store`;
  if (code.startsWith('57P0') || code === '53300')
    return `${at} cannot take a connection now (${code}: ${said}): retry shortly`;
  if (code === 'ECONNRESET' || code === 'EPIPE' || /connection terminated/i.test(said))
    return `${at} closed the connection before answering (${said}): is PostgreSQL what listens on that port, and does it take connections from here?`;
  return null;
}

/**
 * A failure to open the store that waiting may cure: the server refused or did not answer, is
 * starting up or shutting down, has no connection slot free. Not: a wrong password, a missing
 * database, a bad URL or TLS set-up, missing rights.
 */
export function isPassingStoreOpenFailure(err: unknown): boolean {
  const { code, said } = driverFailure(err);
  // A name that does not resolve is more often a typo than a late DNS entry.
  if (code === 'ENOTFOUND') return false;
  return (
    isConnectionFailure(code, said) || code.startsWith('08') || code.startsWith('57P0') || code === '53300'
  );
}

/**
 * Open (and by default migrate) the store. `clock` is SQLite's; PostgreSQL uses the database's.
 * `onBackgroundError`: a failure off the request path that the store survived (SQLite's checkpoint
 * thread stopped), for the log.
 */
export async function openStore(
  config: ResolvedStoreConfig,
  clock: Clock,
  onBackgroundError?: (err: Error, what: string) => void,
): Promise<Store> {
  if (config.kind === 'sqlite') return createSqliteStore({ path: config.path, clock, onBackgroundError });
  const { createPostgresStore } = await import('./store/postgres/postgres-store.js');
  const { kind: _kind, ...pg } = config;
  return createPostgresStore({ ...pg, clock: 'database' });
}

/** The SQLite default path for a data directory. */
export const defaultSqlitePath = (dataDir: string): string => join(dataDir, 'rouse.db');
