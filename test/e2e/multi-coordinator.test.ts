/**
 * Issue 3 tests 2, 3 and 5 with real processes on one PostgreSQL (a fresh schema per test):
 * - two coordinators, 16 SDK workers (4 processes × 4 Workers) spread over them, 2,000 tasks, worker
 *   processes SIGKILLed at random and restarted: every task ends completed exactly once (histories);
 * - the two coordinators split the 64 lease shards evenly; one SIGKILLed mid-run, with the agents it
 *   served: the survivor takes all its shards and times out and retries their tasks;
 * - coordinators whose clocks are five minutes off (ahead, behind): no lease expires early or late.
 */
import { Client } from '@rouse/sdk';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { LEASE_SHARD_COUNT } from '../../packages/server/src/store/lease-shards.js';
import { type Cluster, observerStore, startCluster } from '../harness/cluster.js';
import { type FreshSchema, freshSchema } from '../harness/postgres.js';
import { waitFor } from '../harness/wait.js';
import { startWorkerProcess, type WorkerProcess } from '../harness/worker-process.js';

const fastTiming = { heartbeatIntervalMs: 200, timeoutFactor: 3 };

let schema: FreshSchema | undefined;
let cluster: Cluster | undefined;
const workers: WorkerProcess[] = [];

afterEach(async () => {
  for (const w of workers.splice(0))
    if (w.proc.exitCode === null && w.proc.signalCode === null) w.kill('SIGKILL');
  await cluster?.stop();
  cluster = undefined;
  await schema?.drop();
  schema = undefined;
});

/** Run `sql` on the test's schema. */
async function query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: schema!.connectionString });
  await client.connect();
  try {
    await client.query(`SET search_path TO "${schema!.schema}"`);
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

function adminOf(c: { url: string }): Client {
  return new Client({ url: c.url, token: cluster!.adminToken });
}

function worker(
  coord: { url: string },
  name: string,
  options: Parameters<typeof startWorkerProcess>[1] = {},
): WorkerProcess {
  const w = startWorkerProcess({ url: coord.url, agentToken: cluster!.agentToken }, { name, ...options });
  workers.push(w);
  return w;
}

describe('several coordinators on one PostgreSQL', () => {
  it('2,000 tasks, 16 workers on two coordinators, workers killed at random: each completed exactly once', async () => {
    schema = await freshSchema('mc_load');
    cluster = await startCluster(schema);
    const [c0, c1] = cluster.coordinators as [
      (typeof cluster.coordinators)[0],
      (typeof cluster.coordinators)[0],
    ];
    const homes = [c0, c0, c1, c1];
    const procs = homes.map((home, i) =>
      worker(home, `p${i}`, { types: ['load'], workers: 4, concurrency: 1, waitMs: 1000 }),
    );
    await Promise.all(
      procs.map((p) => p.waitForLine((m: { event?: string }) => m.event === 'allStarted', 30_000)),
    );

    const total = 2000;
    const batch = 250;
    for (let i = 0; i < total; i += batch) {
      await adminOf(i % (2 * batch) === 0 ? c0 : c1).createTasks(
        Array.from({ length: batch }, (_, j) => ({
          type: 'load',
          payload: { mode: 'sleep', ms: 50, n: i + j },
          maxAttempts: 25,
          timing: fastTiming,
        })),
      );
    }

    // Kill a random worker process every ~600 ms, restart it on the same coordinator.
    let kills = 0;
    const completedCount = async () =>
      Number(
        (await query<{ n: string }>("SELECT count(*) AS n FROM tasks WHERE status = 'completed'"))[0]!.n,
      );
    while (kills < 8 && (await completedCount()) < total * 0.9) {
      await new Promise((r) => setTimeout(r, 600));
      const i = Math.floor(Math.random() * procs.length);
      const victim = procs[i]!;
      victim.kill('SIGKILL');
      await victim.exited;
      kills++;
      procs[i] = worker(homes[i]!, `p${i}-r${kills}`, {
        types: ['load'],
        workers: 4,
        concurrency: 1,
        waitMs: 1000,
      });
    }
    expect(kills).toBeGreaterThanOrEqual(3);

    await waitFor(async () => (await completedCount()) === total, {
      what: 'every task to complete',
      timeoutMs: 120_000,
      intervalMs: 250,
    });

    const rows = await query<{
      id: string;
      status: string;
      attempt: number;
      completions: string;
      claims: string;
      timeouts: string;
    }>(`
      SELECT t.id, t.status, t.attempt,
        count(*) FILTER (WHERE e.to_status = 'completed') AS completions,
        -- A claim that started the task at once is stored as one row ending in running: count reasons.
        count(*) FILTER (WHERE e.reason = 'claimed') AS claims,
        count(*) FILTER (WHERE e.to_status = 'timeout') AS timeouts
      FROM tasks t JOIN task_events e ON e.task_id = t.id
      WHERE t.type = 'load' GROUP BY t.id, t.status, t.attempt`);
    expect(rows).toHaveLength(total);
    for (const r of rows) {
      expect(r.status).toBe('completed');
      expect(Number(r.completions)).toBe(1);
      expect(Number(r.claims)).toBe(r.attempt);
    }
    // The kills did cost attempts: some tasks timed out and were retried, and still completed once.
    expect(rows.filter((r) => Number(r.timeouts) > 0).length).toBeGreaterThan(0);

    // The API says the same as the database for a sample of histories.
    const admin = adminOf(c1);
    for (const r of rows.slice(0, 25)) {
      const events = await admin.getTaskEvents(r.id);
      expect(events.filter((e) => e.to === 'completed')).toHaveLength(1);
      expect(events.filter((e) => e.to === 'claimed')).toHaveLength(r.attempt);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    }
    // The two coordinators split the lease shards evenly under load, each renewing its half.
    const held = await query<{ owner_id: string; n: string }>(`
      SELECT owner_id, count(*) AS n FROM shard_leases
      WHERE expires_at > floor(extract(epoch FROM now()) * 1000) GROUP BY owner_id ORDER BY owner_id`);
    expect(held.map((r) => [r.owner_id, Number(r.n)])).toEqual([
      ['c0', LEASE_SHARD_COUNT / 2],
      ['c1', LEASE_SHARD_COUNT / 2],
    ]);
    // Both coordinators' agents did work.
    let onC0 = 0;
    let onC1 = 0;
    for (const w of workers) {
      const n = w.events().filter((e) => e.event === 'completed').length;
      if (/^p[01]/.test(w.name)) onC0 += n;
      else onC1 += n;
    }
    expect(onC0).toBeGreaterThan(0);
    expect(onC1).toBeGreaterThan(0);
  }, 240_000);

  it('two split the shards; one SIGKILLed with its agents: the survivor takes all 64, times out and retries their tasks', async () => {
    schema = await freshSchema('mc_owner');
    cluster = await startCluster(schema);
    const [c0, c1] = cluster.coordinators as [
      (typeof cluster.coordinators)[0],
      (typeof cluster.coordinators)[0],
    ];
    const observer = await observerStore(schema);
    try {
      // c0 started first and took every shard; once c1 is live, c0 hands it the upper half.
      const split = await waitFor(
        async () => {
          const now = await observer.now();
          const live = (await observer.listShardLeases()).filter((l) => l.expiresAt > now);
          const c0 = live.filter((l) => l.ownerId === 'c0').map((l) => l.shard);
          const c1 = live.filter((l) => l.ownerId === 'c1').map((l) => l.shard);
          return c0.length === LEASE_SHARD_COUNT / 2 && c1.length === LEASE_SHARD_COUNT / 2
            ? { c0, c1 }
            : undefined;
        },
        { what: 'c0 and c1 to hold half the shards each', timeoutMs: 10_000 },
      );
      expect(split.c0).toEqual([...Array(LEASE_SHARD_COUNT / 2).keys()]);
      expect((await observer.listCoordinators()).map((c) => c.id)).toEqual(['c0', 'c1']);
      const victim = worker(c0, 'victim', { types: ['owner'], concurrency: 4 });
      await victim.waitFor('started');
      const tasks = await adminOf(c0).createTasks(
        Array.from({ length: 4 }, (_, i) => ({
          type: 'owner',
          payload: { mode: 'hang-first', i },
          timing: fastTiming,
        })),
      );
      for (const t of tasks) await victim.waitFor('hanging', t.id);
      const rescuer = worker(c1, 'rescuer', { types: ['owner'], concurrency: 4 });
      await rescuer.waitFor('started');

      // The coordinator that granted the leases (and holds half the shards) dies, and so do its agents.
      victim.kill('SIGKILL');
      await c0.kill('SIGKILL');
      await victim.exited;

      await waitFor(async () => (await observer.listShardLeases()).every((l) => l.ownerId === 'c1'), {
        what: 'the survivor to take every shard',
        timeoutMs: 10_000,
      });
      const leases = await observer.listShardLeases();
      expect(leases).toHaveLength(LEASE_SHARD_COUNT);
      expect(leases.every((l) => l.epoch >= 2)).toBe(true);
      expect((await observer.listCoordinators()).map((c) => c.id)).toEqual(['c1']);

      const admin = adminOf(c1);
      for (const t of tasks) {
        await rescuer.waitFor('completed', t.id, 30_000);
        const done = await admin.getTask(t.id);
        expect(done).toMatchObject({
          status: 'completed',
          attempt: 2,
          result: { by: 'rescuer', attempt: 2 },
        });
        const events = await admin.getTaskEvents(t.id);
        expect(events.map((e) => e.to)).toEqual([
          'created',
          'claimed',
          'running',
          'timeout',
          'claimed',
          'running',
          'completed',
        ]);
        const timeout = events.find((e) => e.to === 'timeout')!;
        expect(timeout.actor).toBe('coordinator');
        expect(timeout.reason).toBe('heartbeat_timeout');
      }
    } finally {
      await observer.close();
    }
  }, 120_000);

  it('coordinators five minutes ahead and behind: leases expire on time, never early', async () => {
    schema = await freshSchema('mc_skew');
    const skews = [5 * 60_000, -5 * 60_000];
    cluster = await startCluster(schema, { extraArgs: (i) => ['--clock-offset-ms', String(skews[i])] });
    for (const [i, c] of cluster.coordinators.entries()) {
      const type = `skew${i}`;
      const steady = worker(c, `steady${i}`, { types: [type], concurrency: 1 });
      const victim = worker(c, `victim${i}`, { types: [type], concurrency: 1 });
      await Promise.all([steady.waitFor('started'), victim.waitFor('started')]);
      const admin = adminOf(c);
      // A task that runs for several heartbeat timeouts: it must not be expired early.
      const { task: long } = await admin.createTask({
        type,
        payload: { mode: 'sleep', ms: 2500 },
        timing: fastTiming,
      });
      // A task whose agent dies: it must time out one heartbeat timeout after its last heartbeat.
      const { task: hung } = await admin.createTask({ type, payload: { mode: 'hang' }, timing: fastTiming });
      // Whichever of the two got it: wait for its line, then kill that process.
      const hungWorker = await Promise.race(
        [steady, victim].map((w) =>
          w.waitFor('hanging', hung.id).then(
            () => w,
            () => new Promise<never>(() => undefined),
          ),
        ),
      );
      hungWorker.kill('SIGKILL');
      await hungWorker.exited;
      const timedOut = await waitFor(
        async () => {
          const t = await admin.getTask(hung.id);
          return t.status === 'timeout' ? t : undefined;
        },
        { what: `task ${hung.id} to time out`, timeoutMs: 15_000 },
      );
      const ev = (await admin.getTaskEvents(hung.id)).find((e) => e.to === 'timeout')!;
      // The lease was last renewed at start or by the last heartbeat (database time, like `ev.at`).
      const renewedAt = Math.max(timedOut.startedAt ?? 0, timedOut.lastHeartbeatAt ?? 0);
      expect(ev.at - renewedAt).toBeGreaterThanOrEqual(600);
      expect(ev.at - renewedAt).toBeLessThan(600 + 2000);

      await waitFor(async () => (await admin.getTask(long.id)).status === 'completed', {
        what: 'the long task to complete',
        timeoutMs: 20_000,
      });
      const path = (await admin.getTaskEvents(long.id)).map((e) => e.to);
      expect(path).toEqual(['created', 'claimed', 'running', 'completed']);
    }
  }, 120_000);
});
