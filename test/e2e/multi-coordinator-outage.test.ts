/**
 * Issue 3, test 4: PostgreSQL stopped and restarted mid-run under two coordinators and their workers.
 * During the outage every API call answers `503 unavailable` within a bound (never a 500, never a
 * hang) and `/readyz` says so; when PostgreSQL is back, work resumes and every task is completed
 * exactly once. A PostgreSQL server of this test's own (the shared one must not be stopped).
 */
import { Client } from '@rouse/sdk';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { type Cluster, startCluster } from '../harness/cluster.js';
import { type PrivatePostgres, privatePostgres } from '../harness/postgres.js';
import { waitFor } from '../harness/wait.js';
import { startWorkerProcess, type WorkerProcess } from '../harness/worker-process.js';

/** Heartbeats every 250 ms, a lease of 1.5 s: the outage (4 s) is far longer than a lease. */
const fastTiming = { heartbeatIntervalMs: 250, timeoutFactor: 6 };
/** An API call during the outage must answer within this (connect and statement timeouts are 2 s). */
const BOUND_MS = 5000;

let server: PrivatePostgres | undefined;
let cluster: Cluster | undefined;
const workers: WorkerProcess[] = [];

afterAll(async () => {
  for (const w of workers) if (w.proc.exitCode === null && w.proc.signalCode === null) w.kill('SIGKILL');
  await Promise.all(workers.map((w) => w.exited));
  await cluster?.stop();
  await server?.destroy();
});

async function countCompleted(url: string, schema: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const r = await client.query(`SELECT count(*) AS n FROM "${schema}".tasks WHERE status = 'completed'`);
    return Number(r.rows[0].n);
  } finally {
    await client.end();
  }
}

interface Probe {
  what: string;
  status: number;
  code: string | null;
  ms: number;
}

async function probe(what: string, url: string, init: RequestInit = {}): Promise<Probe> {
  const started = Date.now();
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(BOUND_MS + 5000) });
    const body = (await res.json().catch(() => null)) as { error?: { code?: string } } | null;
    return { what, status: res.status, code: body?.error?.code ?? null, ms: Date.now() - started };
  } catch {
    return { what, status: 0, code: 'no answer', ms: Date.now() - started };
  }
}

describe('PostgreSQL outage', () => {
  it('answers 503 unavailable while PostgreSQL is down, then finishes every task exactly once', async () => {
    server = await privatePostgres();
    const target = { connectionString: server.url, schema: 'rouse_outage' };
    cluster = await startCluster(target, {
      extraArgs: ['--statement-timeout', '2s', '--connect-timeout', '2s'],
    });
    const [c0, c1] = cluster.coordinators as [
      (typeof cluster.coordinators)[0],
      (typeof cluster.coordinators)[0],
    ];
    for (const [i, c] of [c0, c1].entries()) {
      workers.push(
        startWorkerProcess(
          { url: c.url, agentToken: cluster.agentToken },
          { name: `o${i}`, types: ['outage'], workers: 2, concurrency: 2, waitMs: 1000 },
        ),
      );
    }
    await Promise.all(
      workers.map((w) => w.waitForLine((m: { event?: string }) => m.event === 'allStarted', 30_000)),
    );
    const admin = new Client({ url: c0.url, token: cluster.adminToken });
    const auth = { authorization: `Bearer ${cluster.adminToken}`, 'content-type': 'application/json' };
    const total = 300;
    const created = await admin.createTasks(
      Array.from({ length: total }, (_, n) => ({
        type: 'outage',
        payload: { mode: 'sleep', ms: 100, n },
        maxAttempts: 10,
        timing: fastTiming,
      })),
    );
    await waitFor(async () => (await countCompleted(server!.url, target.schema)) >= 40, {
      what: 'work under way',
    });

    await server.stop();
    const probes: Probe[] = [];
    const outageStarted = Date.now();
    while (Date.now() - outageStarted < 4000) {
      for (const c of [c0, c1]) {
        probes.push(
          ...(await Promise.all([
            probe('readyz', `${c.url}/readyz`),
            probe('get task', `${c.url}/v1/tasks/${created[0]!.id}`, { headers: auth }),
            probe('list tasks', `${c.url}/v1/tasks?limit=5`, { headers: auth }),
            probe('create task', `${c.url}/v1/tasks`, {
              method: 'POST',
              headers: auth,
              body: JSON.stringify({ type: 'outage-extra', payload: {} }),
            }),
          ])),
        );
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    await server.restart();

    const unavailable = probes.filter((p) => p.status === 503 && p.code === 'unavailable');
    expect(unavailable.length).toBeGreaterThan(0);
    expect(probes.filter((p) => p.what === 'readyz' && p.status === 503).length).toBeGreaterThan(0);
    expect(probes.filter((p) => p.status >= 500 && p.status !== 503)).toEqual([]);
    expect(probes.filter((p) => p.status === 0)).toEqual([]);
    expect(Math.max(...probes.map((p) => p.ms))).toBeLessThan(BOUND_MS);
    // Anything that did answer 2xx during the outage was before PostgreSQL went away (or a cached read).
    for (const c of [c0, c1]) {
      expect(
        c.child.lines.concat(c.child.errLines).filter((l) => l.includes('unhandled error in request')),
      ).toEqual([]);
    }

    // Back: readiness returns, the rest of the work completes, each task exactly once.
    await waitFor(async () => (await fetch(`${c0.url}/readyz`)).ok && (await fetch(`${c1.url}/readyz`)).ok, {
      what: 'both coordinators ready again',
      timeoutMs: 30_000,
    });
    await waitFor(async () => (await countCompleted(server!.url, target.schema)) === total, {
      what: 'every task to complete after the outage',
      timeoutMs: 90_000,
      intervalMs: 250,
    });
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      const rows = (
        await client.query(`
          SELECT t.id, t.status, count(*) FILTER (WHERE e.to_status = 'completed') AS completions,
            count(*) FILTER (WHERE e.to_status = 'timeout') AS timeouts
          FROM "${target.schema}".tasks t JOIN "${target.schema}".task_events e ON e.task_id = t.id
          WHERE t.type = 'outage' GROUP BY t.id, t.status`)
      ).rows as { id: string; status: string; completions: string; timeouts: string }[];
      expect(rows).toHaveLength(total);
      for (const r of rows) {
        expect(r.status).toBe('completed');
        expect(Number(r.completions)).toBe(1);
      }
      // Agents could not heartbeat while the database was away: their leases got a grace after it, so
      // none of the tasks running through the outage was declared dead.
      expect(rows.filter((r) => Number(r.timeouts) > 0)).toEqual([]);
    } finally {
      await client.end();
    }
  }, 180_000);
});
