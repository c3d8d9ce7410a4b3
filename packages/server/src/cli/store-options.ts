/** The flags that choose and reach the store, shared by `rouse serve` and `rouse migrate`. */
import type { Command } from 'commander';
import { durationOption } from './duration-option.js';
import { parsePositiveInteger } from './parse.js';

/** How long `serve` waits for an unreachable PostgreSQL store at start-up unless --store-wait says. */
export const DEFAULT_STORE_WAIT_MS = 30_000;

/** The store URL a command line asks for: --store, else ROUSE_STORE (undefined: neither). */
export function storeUrl(opts: StoreCliOptions, env: Record<string, string | undefined>): string | undefined {
  return opts.store ?? env.ROUSE_STORE;
}

/** The options that choose and reach the store (shared with `rouse migrate`). */
export interface StoreCliOptions {
  store?: string;
  pgSchema?: string;
  poolSize?: number;
  statementTimeout?: number;
  connectTimeout?: number;
  pgSsl?: boolean;
  pgSslCa?: string;
  pgSslInsecure?: boolean;
  migrate?: boolean;
}

/** Add --store and the PostgreSQL connection flags to `cmd`. */
export function addStoreOptions(cmd: Command): Command {
  return cmd
    .option(
      '--store <url>',
      'store: postgres://user:pass@host:5432/db (several coordinators share it), sqlite or sqlite:<path> (env ROUSE_STORE; default: SQLite)',
    )
    .option(
      '--pg-schema <name>',
      'PostgreSQL schema holding the tables (env ROUSE_PG_SCHEMA; default: public)',
    )
    .option('--pool-size <n>', 'PostgreSQL connections per coordinator (default: 10)', parsePositiveInteger)
    .addOption(
      durationOption(
        '--statement-timeout <duration>',
        'longest a PostgreSQL statement may run; calls answer 503 past it (default: 5s)',
      ),
    )
    .addOption(
      durationOption(
        '--connect-timeout <duration>',
        'longest opening a PostgreSQL connection may take (default: 5s)',
      ),
    )
    .option('--pg-ssl', 'connect to PostgreSQL over TLS, verifying its certificate')
    .option('--pg-ssl-ca <file>', 'trust this CA certificate (PEM) for PostgreSQL TLS (implies --pg-ssl)')
    .option('--pg-ssl-insecure', 'TLS without verifying the certificate (testing only)');
}
