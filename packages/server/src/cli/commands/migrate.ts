/**
 * `rouse migrate`: apply the store's pending migrations (all in one transaction, under the store's
 * lock), or with `--status` report which are applied and which are pending. PostgreSQL (`--store
 * postgres://…`) or SQLite (`--db`, default `<data-dir>/rouse.db`). `rouse serve` migrates on start
 * unless `--no-migrate`; this is for deployments that migrate as a separate step.
 */
import type { Command } from 'commander';
import { action } from '../action.js';
import type { MigrateOptions } from '../actions/migrate.js';
import type { CliContext } from '../context.js';
import { addStoreOptions } from '../store-options.js';

export function registerMigrate(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('migrate')
    .description('apply pending schema migrations to the store (or --status: show them)')
    .option('--data-dir <dir>', 'data directory of a SQLite store (default: ./.rouse)')
    .option('--db <path>', 'SQLite database file (default: <data-dir>/rouse.db)')
    .option('--status', 'only report applied and pending migrations; change nothing')
    .option('--json', 'print the result as JSON');
  addStoreOptions(cmd)
    .addHelpText(
      'after',
      `
All pending migrations run in one transaction (PostgreSQL: under an advisory lock, so coordinators
starting together migrate once). A database migrated by a newer rouse is refused (exit 1).
Exit codes: 0 done (or --status: up to date), 1 error (or --status: migrations pending).

Examples:
  $ rouse migrate --store postgres://rouse:secret@db:5432/rouse
  $ rouse migrate --status --json --store "$ROUSE_STORE" --pg-schema rouse
  $ rouse migrate --data-dir /var/lib/rouse`,
    )
    .action(
      action(ctx, async (opts: MigrateOptions) => (await import('../actions/migrate.js')).migrate(ctx, opts)),
    );
}
