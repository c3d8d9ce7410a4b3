/**
 * The PostgreSQL behind the bench's `--store postgres*` runs: the server `DATABASE_URL` names. `npm run
 * bench` (scripts/bench.mjs) starts a private one for the run when it is not set (default settings, so
 * `synchronous_commit=on`) and names its data directory in `ROUSE_BENCH_PG_DATA`, where the bench
 * finds the postmaster's pid to measure the server's CPU. Each workload gets a fresh schema, dropped
 * at the end.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
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
  if (!fromEnv) {
    throw new Error(
      'the PostgreSQL stores need a server: set DATABASE_URL, or run the bench with `npm run bench`, which starts a private one for the run',
    );
  }
  const dataDir = process.env.ROUSE_BENCH_PG_DATA;
  log(dataDir ? 'postgres: using the server npm run bench started' : 'postgres: using DATABASE_URL');
  return {
    url: fromEnv,
    freshSchema,
    serverCpuMs() {
      // A server elsewhere (possibly on another machine) is not measured.
      const pid = dataDir ? postmasterPid(dataDir) : null;
      return pid === null ? null : serverTreeCpuMs(pid);
    },
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

/** The postmaster's pid: the first line of `postmaster.pid` in the data directory. */
function postmasterPid(dataDir: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]!, 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}
