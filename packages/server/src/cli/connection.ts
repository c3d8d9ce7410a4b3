/**
 * How client commands find the coordinator: `--url` / `ROUSE_URL` and `--token` / `ROUSE_TOKEN`,
 * else the local data directory (`<--data-dir or ./.rouse>/server.json` for the URL, `admin.token` for
 * the token) written by `rouse serve`.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client } from '@rouse/sdk';
import type { ConnectionOptions } from './connection-options.js';
import { type CliContext, CliError, EXIT } from './context.js';

export interface Connection {
  url: string;
  token: string;
  /** Where the URL came from, for error messages ("--url", "ROUSE_URL", ".rouse/server.json"). */
  urlSource: string;
  /** The pid recorded in server.json, when the URL came from there. */
  serverPid: number | null;
}

export const DEFAULT_DATA_DIR = './.rouse';

/** The data directory: `--data-dir`, else `ROUSE_DATA_DIR`, else `./.rouse`, resolved against cwd. */
export function resolveDataDir(ctx: CliContext, dataDir: string | undefined): string {
  return resolve(ctx.deps.cwd, dataDir ?? ctx.env.ROUSE_DATA_DIR ?? DEFAULT_DATA_DIR);
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}

export function resolveConnection(ctx: CliContext, opts: ConnectionOptions): Connection {
  const dataDir = resolveDataDir(ctx, opts.dataDir);
  let url = opts.url ?? ctx.env.ROUSE_URL;
  let urlSource = opts.url ? '--url' : 'ROUSE_URL';
  let serverPid: number | null = null;
  if (!url) {
    const serverFile = join(dataDir, 'server.json');
    const text = readText(serverFile);
    if (text) {
      try {
        const info = JSON.parse(text) as { url?: unknown; pid?: unknown };
        if (typeof info.url === 'string') url = info.url;
        if (typeof info.pid === 'number') serverPid = info.pid;
      } catch {
        // an unreadable server.json is the same as none
      }
    }
    urlSource = serverFile;
    if (!url) {
      throw new CliError(
        `no coordinator found: ${serverFile} does not exist.\n` +
          '  Start one here with `rouse serve` (or `npx rouse serve`), or point at a running one with\n' +
          '  --url <url> / ROUSE_URL (and --token / ROUSE_TOKEN).',
        EXIT.unreachable,
      );
    }
  }
  const token =
    opts.token || ctx.env.ROUSE_TOKEN || readText(join(dataDir, 'admin.token')) || ctx.env.ROUSE_ADMIN_TOKEN;
  if (!token) {
    throw new CliError(
      `no token: pass --token or set ROUSE_TOKEN (no admin token in ${join(dataDir, 'admin.token')})`,
      EXIT.usage,
    );
  }
  return { url: url.replace(/\/+$/, ''), token, urlSource, serverPid };
}

export function createClient(ctx: CliContext, opts: ConnectionOptions): { client: Client; conn: Connection } {
  const conn = resolveConnection(ctx, opts);
  ctx.reachHint = { url: conn.url, urlSource: conn.urlSource, serverPid: conn.serverPid };
  return { client: new Client({ url: conn.url, token: conn.token }), conn };
}
