/** The store a `rouse serve` / `rouse migrate` command line asks for (see `store-options.ts`). */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { INVALID_POSTGRES_URL, type StoreConfig } from '../server-store.js';
import { SCHEMA_NAME } from '../store/postgres/postgres-options.js';
import { isPostgresUrl } from '../store/store-url.js';
import { type CliContext, CliError, EXIT } from './context.js';
import { type StoreCliOptions, storeUrl } from './store-options.js';

/** The store from --store / ROUSE_STORE and the PostgreSQL flags; undefined: SQLite (--db). */
export function storeConfig(ctx: CliContext, opts: StoreCliOptions): StoreConfig | undefined {
  const url = storeUrl(opts, ctx.env);
  const pgFlags = [
    ['--pg-schema', opts.pgSchema],
    ['--pool-size', opts.poolSize],
    ['--statement-timeout', opts.statementTimeout],
    ['--connect-timeout', opts.connectTimeout],
    ['--pg-ssl', opts.pgSsl],
    ['--pg-ssl-ca', opts.pgSslCa],
    ['--pg-ssl-insecure', opts.pgSslInsecure],
  ] as const;
  if (url === undefined || !isPostgresUrl(url)) {
    const given = pgFlags.find(([, v]) => v !== undefined);
    if (given)
      throw new CliError(`${given[0]} needs a PostgreSQL store: pass --store postgres://…`, EXIT.usage);
    if (url === undefined || url === '' || url === 'sqlite') return undefined;
    if (url.startsWith('sqlite:')) return { kind: 'sqlite', path: resolve(ctx.deps.cwd, url.slice(7)) };
    throw new CliError(
      `--store must be a postgres:// URL, sqlite or sqlite:<path> (got "${url}")`,
      EXIT.usage,
    );
  }
  if (!URL.canParse(url)) throw new CliError(INVALID_POSTGRES_URL, EXIT.usage);
  let ssl: boolean | { ca?: string; rejectUnauthorized?: boolean } | undefined;
  if (opts.pgSslCa !== undefined) {
    let ca: string;
    try {
      ca = readFileSync(resolve(ctx.deps.cwd, opts.pgSslCa), 'utf8');
    } catch (err) {
      throw new CliError(`--pg-ssl-ca: cannot read ${opts.pgSslCa}: ${(err as Error).message}`, EXIT.usage);
    }
    ssl = { ca, ...(opts.pgSslInsecure ? { rejectUnauthorized: false } : {}) };
  } else if (opts.pgSslInsecure) ssl = { rejectUnauthorized: false };
  else if (opts.pgSsl) ssl = true;
  const schema = opts.pgSchema ?? ctx.env.ROUSE_PG_SCHEMA;
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    throw new CliError(
      `${opts.pgSchema === undefined ? 'ROUSE_PG_SCHEMA' : '--pg-schema'}: "${schema}" is not a schema name: a lower-case SQL identifier (a letter or _, then letters, digits or _; at most 63)`,
      EXIT.usage,
    );
  }
  return {
    kind: 'postgres',
    connectionString: url,
    ...(schema ? { schema } : {}),
    ...(opts.poolSize === undefined ? {} : { poolSize: opts.poolSize }),
    ...(opts.statementTimeout === undefined ? {} : { statementTimeoutMs: opts.statementTimeout }),
    ...(opts.connectTimeout === undefined ? {} : { connectTimeoutMs: opts.connectTimeout }),
    ...(ssl === undefined ? {} : { ssl }),
    ...(opts.migrate === undefined ? {} : { migrate: opts.migrate }),
  };
}
