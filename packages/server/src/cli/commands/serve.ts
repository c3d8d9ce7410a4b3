/**
 * `rouse serve`: run the coordinator (HTTP API on SQLite, or on PostgreSQL shared with other
 * coordinators) until SIGINT/SIGTERM.
 */
import { type Command, Option } from 'commander';
import { action } from '../action.js';
import type { ServeOptions } from '../actions/serve.js';
import type { CliContext } from '../context.js';
import { durationOption } from '../duration-option.js';
import { formatDuration } from '../format/time.js';
import { applyLeanHeap } from '../heap-tuning.js';
import { parseInteger, parsePort } from '../parse.js';
import { addStoreOptions, DEFAULT_STORE_WAIT_MS, storeUrl } from '../store-options.js';

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

export function registerServe(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('serve')
    .description(
      'run the coordinator (HTTP API; SQLite, or PostgreSQL shared by several coordinators) until Ctrl-C',
    )
    .option('-p, --port <port>', 'port to listen on (0 = any free port)', parsePort, 7070)
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option(
      '--data-dir <dir>',
      'data directory: SQLite database, result blobs (SQLite only), token files, server.json (default: ./.rouse)',
    )
    .option('--db <path>', 'SQLite database file, or :memory: (default: <data-dir>/rouse.db)');
  addStoreOptions(cmd)
    .option(
      '--no-migrate',
      'do not apply pending migrations on start (run `rouse migrate`); refuse an older schema',
    )
    .addOption(
      durationOption(
        '--store-wait <duration>',
        `how long start-up waits for a PostgreSQL store that refuses or does not answer yet (e.g. started alongside), trying every second; a wrong password or missing database fails at once (default: ${formatDuration(DEFAULT_STORE_WAIT_MS)}; 0 = no wait)`,
        { min: 0 },
      ),
    )
    .addOption(
      durationOption(
        '--shard-lease-ttl <duration>',
        "lease on this coordinator's lease shards: a dead coordinator's shards move within this (default: 5s)",
        { min: 30 }, // the least shardLeaseTtlMs the coordinator accepts
      ),
    )
    .option(
      '--coordinator-id <id>',
      "this coordinator's name in the shard leases, unique among live ones: a start under the id of a live coordinator is refused; under a dead one's, it waits for its presence to lapse (default: random per start)",
    )
    .addOption(
      // the least sweepIntervalMs the coordinator accepts
      durationOption('--sweep-interval <duration>', 'overdue-lease sweep period', { min: 10 }).hideHelp(),
    )
    .addOption(
      new Option('--clock-offset-ms <ms>', "shift this coordinator's clock (tests)")
        .argParser(parseInteger)
        .hideHelp(),
    )
    .addOption(new Option('--log-level <level>', 'log level').choices(LOG_LEVELS).default('info'))
    .option(
      '--policies <file>',
      "the watchdog's policy file (YAML; hot-reloaded; check it with `rouse policy check`) (default: <data-dir>/policies.yaml when present)",
    )
    .option('--metrics-public', 'serve GET /metrics without a token')
    .option('--show-tokens', 'print the token values in the banner (they are secrets)')
    .addHelpText(
      'after',
      `
Tokens: the admin token is read from ROUSE_ADMIN_TOKEN and the agent enrollment token from
ROUSE_AGENT_TOKEN (and ROUSE_READONLY_TOKEN); missing ones are generated on first start into the
data directory (mode 0600). The banner prints where they are, never their values unless --show-tokens.

Logs are JSON lines (pino) on stdout, or one readable line per record when stdout is a terminal.
The actual URL (useful with --port 0) is in <data-dir>/server.json while the server runs.
It stops gracefully on SIGINT/SIGTERM, and, when started through npm (npx, npm exec, npm run), when
npm exits: npm does not pass signals on.

Memory: the coordinator caps V8's young generation at 8 MB (16 MB on PostgreSQL) and collects the
old one once it has grown 20% past what it kept, as its state lives in the store: about 40 MB less
under load than with Node's defaults, for a few percent more CPU. ROUSE_HEAP=node keeps Node's
defaults; a heap flag given to node itself (node --max-semi-space-size=16 …) wins over the matching
setting.

Several coordinators: start each with the same --store postgres://… and the same tokens (set
ROUSE_ADMIN_TOKEN, ROUSE_AGENT_TOKEN and ROUSE_READONLY_TOKEN on every host), behind any load
balancer. Migrations run on start unless --no-migrate (then run \`rouse migrate --store …\` first).

Examples:
  $ rouse serve
  $ rouse serve --port 0 --data-dir /tmp/rouse --db :memory:
  $ ROUSE_ADMIN_TOKEN=$(openssl rand -hex 24) rouse serve --host 0.0.0.0 --port 8080
  $ rouse serve --store postgres://rouse:secret@db:5432/rouse --pool-size 20 --pg-ssl-ca ca.pem`,
    )
    .action(
      action(ctx, async (opts: ServeOptions) => {
        // Before the server's modules load: they are the first sizeable allocation. (store-url is a
        // leaf; imported here so that help and the other commands load nothing outside cli/.)
        const { isPostgresUrl } = await import('../../store/store-url.js');
        const onPostgres = isPostgresUrl(storeUrl(opts, ctx.env));
        const heap = applyLeanHeap(process.execArgv, ctx.env, onPostgres ? 'postgres' : 'sqlite');
        return (await import('../actions/serve.js')).serve(ctx, opts, heap);
      }),
    );
}
