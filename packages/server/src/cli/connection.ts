/**
 * How client commands find the coordinator: `--url` / `ROUSE_URL` and `--token` / `ROUSE_TOKEN`,
 * else the local data directory (`<--data-dir or ./.rouse>/server.json` for the URL, `admin.token` for
 * the token) written by `rouse serve`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@rouse/sdk';
import type { ConnectionOptions } from './connection-options.js';
import { type CliContext, CliError, EXIT, type ExitCode } from './context.js';
import { resolveDataDir } from './data-dir.js';

export interface Connection {
  url: string;
  token: string;
  /** Where the URL came from, for error messages ("--url", "ROUSE_URL", ".rouse/server.json"). */
  urlSource: string;
  /** The pid recorded in server.json, when the URL came from there. */
  serverPid: number | null;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}

const serverFileOf = (dataDir: string) => join(dataDir, 'server.json');

/**
 * A coordinator URL is http(s) with a host. One the user gave (--url, ROUSE_URL) that is not is a usage
 * error; the message shows what a valid one looks like.
 */
function checkUrl(url: string, exitCode: ExitCode, source: string): void {
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    // reported below
  }
  const example = 'a coordinator URL looks like http://127.0.0.1:7070';
  if (parsed && (parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.hostname !== '') {
    // A proxy's prefix (https://host/rouse) is fine; the API's own path is what the commands add.
    if (!/(^|\/)v1(\/|$)/.test(parsed.pathname)) return;
    throw new CliError(
      `${source}: "${url}" names a path of the API (${parsed.pathname}); give the coordinator's address without it (${example})`,
      exitCode,
    );
  }
  const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(url);
  throw new CliError(
    hasScheme
      ? `${source}: "${url}" is not a valid http(s) URL; ${example}`
      : `${source}: "${url}" has no scheme; write http://${url} (${example})`,
    exitCode,
  );
}

export function resolveConnection(ctx: CliContext, opts: ConnectionOptions): Connection {
  const dataDir = resolveDataDir(ctx, opts.dataDir);
  let url = opts.url ?? ctx.env.ROUSE_URL;
  let urlSource = opts.url ? '--url' : 'ROUSE_URL';
  let serverPid: number | null = null;
  if (!url) {
    const serverFile = serverFileOf(dataDir);
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
  checkUrl(url, urlSource === serverFileOf(dataDir) ? EXIT.error : EXIT.usage, urlSource);
  const token =
    opts.token || ctx.env.ROUSE_TOKEN || readText(join(dataDir, 'admin.token')) || ctx.env.ROUSE_ADMIN_TOKEN;
  if (!token) {
    throw new CliError(
      `no token: pass --token or set ROUSE_TOKEN (no admin token in ${join(dataDir, 'admin.token')})`,
      EXIT.usage,
    );
  }
  // A token is printable characters; a stray carriage return (a token file with CRLF line endings,
  // pasted into --token) would otherwise be refused by the HTTP client and said as "cannot reach".
  if (!/^[\x21-\x7e]+$/.test(token)) {
    throw new CliError(
      'the token holds a space or a control character (a carriage return from a file with CRLF line endings?): a token is printable characters only',
      EXIT.usage,
    );
  }
  return { url: url.replace(/\/+$/, ''), token, urlSource, serverPid };
}

export function createClient(ctx: CliContext, opts: ConnectionOptions): { client: Client; conn: Connection } {
  const conn = resolveConnection(ctx, opts);
  ctx.reachHint = { url: conn.url, urlSource: conn.urlSource, serverPid: conn.serverPid };
  // A command makes a call or a few: upgrading to a call stream would cost a round trip more than it
  // saves. A coordinator that cannot be reached is said at once (exit 3), not waited for; the commands
  // that follow something reconnect by themselves (follow.ts).
  const client = new Client({
    url: conn.url,
    token: conn.token,
    callStream: false,
    retry: { unreachableForMs: 0 },
  });
  return { client, conn };
}
