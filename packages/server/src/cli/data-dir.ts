/**
 * The data directory every command shares: `rouse serve` writes its database, tokens and
 * server.json there, and client commands read them. Its own module, so that the server's commands
 * (serve, migrate) do not load the HTTP client along with it.
 */
import { resolve } from 'node:path';
import type { CliContext } from './context.js';

export const DEFAULT_DATA_DIR = './.rouse';

/** The data directory: `--data-dir`, else `ROUSE_DATA_DIR`, else `./.rouse`, resolved against cwd. */
export function resolveDataDir(ctx: CliContext, dataDir: string | undefined): string {
  return resolve(ctx.deps.cwd, dataDir ?? ctx.env.ROUSE_DATA_DIR ?? DEFAULT_DATA_DIR);
}
