/**
 * Options of the PostgreSQL store: `PostgresStoreOptions → resolvePostgresStoreOptions()`. Every
 * default lives here; bad values are rejected naming the option and the rule.
 */
import type { ConnectionOptions } from 'node:tls';
import type { Clock } from '../../core/clock.js';
import { ValidationError } from '../../core/errors.js';

/** How to reach the database; shared by the store and by `migratePostgres`. */
export interface PostgresConnectionOptions {
  /** `postgres://user:password@host:port/database?...` */
  connectionString: string;
  /**
   * The schema holding Rouse's tables (created by the first migration). Several Rouse deployments, or
   * test files, can share one database through different schemas. A lower-case SQL identifier.
   * @default 'public'
   */
  schema?: string;
  /** How long opening a connection (or waiting for a free pooled one) may take. @default 5000 */
  connectTimeoutMs?: number;
  /** TLS: passed through to node-postgres (`true`, or `tls.connect` options). @default undefined (from the URL) */
  ssl?: boolean | ConnectionOptions;
  /** Shown in `pg_stat_activity`. @default 'rouse' */
  applicationName?: string;
}

export interface PostgresStoreOptions extends PostgresConnectionOptions {
  /**
   * Whose time the store uses. `'database'`: the database's `now()`, computed inside every statement,
   * so coordinators with skewed clocks agree (docs/design.md §3). A `Clock` (tests' `ManualClock`): its
   * `now()` is passed to every statement instead.
   * @default 'database'
   */
  clock?: Clock | 'database';
  /** Connections in the pool. @default 10 */
  poolSize?: number;
  /**
   * Longest a statement may run (server `statement_timeout`); an operation also gives up on the client
   * side after this plus `connectTimeoutMs`, so no call hangs past a bound. @default 5000
   */
  statementTimeoutMs?: number;
  /** Apply pending migrations when the store opens; when false, a database behind this build is refused. @default true */
  migrate?: boolean;
}

export interface ResolvedPostgresConnectionOptions {
  connectionString: string;
  schema: string;
  connectTimeoutMs: number;
  ssl: boolean | ConnectionOptions | undefined;
  applicationName: string;
}

export interface ResolvedPostgresStoreOptions extends ResolvedPostgresConnectionOptions {
  clock: Clock | 'database';
  poolSize: number;
  statementTimeoutMs: number;
  migrate: boolean;
}

export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

function positiveInt(name: string, value: number, min: number, unit: string): number {
  if (!Number.isInteger(value) || value < min)
    throw new ValidationError(name, `must be an integer >= ${min}${unit}`);
  return value;
}

export function resolvePostgresConnectionOptions(
  options: PostgresConnectionOptions,
): ResolvedPostgresConnectionOptions {
  const { connectionString } = options;
  if (typeof connectionString !== 'string' || !/^postgres(ql)?:\/\//.test(connectionString)) {
    throw new ValidationError('connectionString', 'must be a postgres:// or postgresql:// URL');
  }
  const schema = options.schema ?? 'public';
  if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema)) {
    throw new ValidationError(
      'schema',
      'must be a lower-case SQL identifier: a letter or _, then letters, digits or _ (at most 63)',
    );
  }
  const applicationName = options.applicationName ?? 'rouse';
  if (typeof applicationName !== 'string' || applicationName.length > 63) {
    throw new ValidationError('applicationName', 'must be a string of at most 63 characters');
  }
  return {
    connectionString,
    schema,
    connectTimeoutMs: positiveInt('connectTimeoutMs', options.connectTimeoutMs ?? 5000, 1, ' (milliseconds)'),
    ssl: options.ssl,
    applicationName,
  };
}

export function resolvePostgresStoreOptions(options: PostgresStoreOptions): ResolvedPostgresStoreOptions {
  const clock = options.clock ?? 'database';
  if (clock !== 'database' && (typeof clock !== 'object' || typeof clock.now !== 'function')) {
    throw new ValidationError('clock', "must be 'database' or a Clock");
  }
  const migrate = options.migrate ?? true;
  if (typeof migrate !== 'boolean') throw new ValidationError('migrate', 'must be a boolean');
  return {
    ...resolvePostgresConnectionOptions(options),
    clock,
    poolSize: positiveInt('poolSize', options.poolSize ?? 10, 1, ''),
    statementTimeoutMs: positiveInt(
      'statementTimeoutMs',
      options.statementTimeoutMs ?? 5000,
      1,
      ' (milliseconds)',
    ),
    migrate,
  };
}

/**
 * The NOTIFY channel of a schema: per schema so that deployments (and test files) sharing a database
 * do not wake each other. Channel names are identifiers of at most 63 bytes.
 */
export function claimableChannel(schema: string): string {
  return channelName('rouse_claimable_', schema);
}

/** The NOTIFY channel of `schema`'s transition notices (see `claimableChannel`). */
export function transitionsChannel(schema: string): string {
  return channelName('rouse_events_', schema);
}

/** `prefix + schema`, within PostgreSQL's 63-byte identifier limit (a long schema gets a hash). */
function channelName(prefix: string, schema: string): string {
  const channel = `${prefix}${schema}`;
  if (channel.length <= 63) return channel;
  let h = 0x811c9dc5;
  for (let i = 0; i < schema.length; i++) h = Math.imul(h ^ schema.charCodeAt(i), 0x01000193) >>> 0;
  return `${prefix}${schema.slice(0, 38)}_${h.toString(16)}`;
}
