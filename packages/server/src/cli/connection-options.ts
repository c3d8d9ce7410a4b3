/**
 * The flags every client command accepts to find the coordinator. Kept apart from `connection.ts` (which
 * resolves them and builds the HTTP client) so that registering a command loads no client code.
 */
import type { Command } from 'commander';

/** Options every client command accepts. */
export interface ConnectionOptions {
  url?: string;
  token?: string;
  dataDir?: string;
}

/**
 * Add `--url`, `--token` and `--data-dir` to a client command. `access` says which token it needs:
 * `read` takes the admin or the read-only token, `admin` only the admin token.
 */
export function withConnectionOptions(cmd: Command, access: 'read' | 'admin' = 'read'): Command {
  const which = access === 'read' ? 'admin or read-only' : 'the admin token (it writes)';
  return cmd
    .option('--url <url>', 'coordinator URL (env: ROUSE_URL; default: from <data-dir>/server.json)')
    .option('--token <token>', `bearer token, ${which} (env: ROUSE_TOKEN; default: <data-dir>/admin.token)`)
    .option('--data-dir <dir>', 'data directory of a local `rouse serve` (env: ROUSE_DATA_DIR)', undefined);
}
