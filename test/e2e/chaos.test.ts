/**
 * Chaos, with real processes: two coordinators on one PostgreSQL, or one on SQLite, and four worker
 * processes (two SDK Workers each). Every second or two a worker process is SIGKILLed (and started
 * again) or frozen for 2.2–2.8 s (SIGSTOP, then SIGCONT: its results arrive after its tasks went to
 * others); each coordinator is SIGKILLed once (on SQLite, the one twice) and restarted on its
 * address. Tasks of every kind are created throughout, from both coordinators: ones that succeed,
 * fail once, fail for good, fail after a checkpoint and resume from it, or ignore their abort signal
 * past their deadline; some created twice with one idempotency key, some deferred, some cancelled
 * while they run.
 *
 * When the dust settles, every task is final and in the state its kind calls for; a completed task's
 * result is its last attempt's (a late result of an earlier one was refused); a resumed attempt got
 * the checkpoint an earlier one stored; every history is whole (numbered without gaps, each entry
 * starting where the one before ended, one claim per attempt, at most one completion) and ends in the
 * task's status; no create failed because a coordinator was restarting, and none was done twice.
 */
import { Client, RouseApiError, RouseNetworkError, type Task, wasNotApplied } from '@rouse/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { type Cluster, startCluster } from '../harness/cluster.js';
import { type CoordinatorProcess, startCoordinatorProcess } from '../harness/coordinator-process.js';
import { type FreshSchema, freshSchema } from '../harness/postgres.js';
import { waitFor } from '../harness/wait.js';
import { startWorkerProcess, type WorkerProcess } from '../harness/worker-process.js';

/** A lease of 1 s; an attempt may run 1 s (its coordinator's deadline is 1.5 s). */
const timing = { heartbeatIntervalMs: 200, timeoutFactor: 5, executionTimeoutMs: 1000, claimTimeoutMs: 2000 };
const TASKS = 480;
const CREATE_SECONDS = 18;
const KINDS = ['ok', 'ok', 'ok', 'ok', 'ok', 'flaky', 'flaky', 'fatal', 'resume', 'resume', 'deaf'] as const;
type Kind = (typeof KINDS)[number];

let schema: FreshSchema | undefined;
let cluster: Cluster | undefined;
let alone: CoordinatorProcess | undefined;
const processes: WorkerProcess[] = [];

afterEach(async () => {
  for (const w of processes.splice(0))
    if (w.proc.exitCode === null && w.proc.signalCode === null) w.kill('SIGKILL');
  await cluster?.stop();
  cluster = undefined;
  await schema?.drop();
  schema = undefined;
  if (alone?.child.proc.exitCode === null && alone.child.proc.signalCode === null)
    await alone.kill('SIGTERM');
  alone = undefined;
});

/** The coordinators under test: two on one PostgreSQL schema, or one on SQLite (listed twice). */
async function coordinatorsOn(store: 'postgres' | 'sqlite'): Promise<{
  coordinators: [CoordinatorProcess, CoordinatorProcess];
  adminToken: string;
  agentToken: string;
}> {
  if (store === 'sqlite') {
    alone = await startCoordinatorProcess();
    return { coordinators: [alone, alone], adminToken: alone.adminToken, agentToken: alone.agentToken };
  }
  schema = await freshSchema('chaos');
  cluster = await startCluster(schema);
  const [c0, c1] = cluster.coordinators as [CoordinatorProcess, CoordinatorProcess];
  return { coordinators: [c0, c1], adminToken: cluster.adminToken, agentToken: cluster.agentToken };
}

/** A small seeded generator, so a failing run can be told apart (the seed is in every message). */
function generator(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(['postgres', 'sqlite'] as const)('chaos on %s', (store) => {
  it('coordinators and workers SIGKILLed or frozen while tasks of every kind run: every task ends as its kind says, its history whole', async () => {
    const seed = Date.now() % 1_000_000_007;
    const random = generator(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const note = `${store}, seed ${seed}`;

    const { coordinators, adminToken, agentToken } = await coordinatorsOn(store);
    // The default options: a create that provably did nothing is sent again through a restart.
    const admins = coordinators.map((c) => new Client({ url: c.url, token: adminToken }));

    const homes = [coordinators[0], coordinators[1], coordinators[0], coordinators[1]];
    const slots: WorkerProcess[] = [];
    const startSlot = (i: number): WorkerProcess => {
      const w = startWorkerProcess(
        { url: homes[i]!.url, agentToken },
        { name: `p${i}-${processes.length}`, types: ['chaos'], workers: 2, concurrency: 3, waitMs: 1000 },
      );
      processes.push(w);
      slots[i] = w;
      return w;
    };
    for (let i = 0; i < homes.length; i++) startSlot(i);
    await Promise.all(
      slots.map((w) => w.waitForLine((m: { event?: string }) => m.event === 'allStarted', 30_000)),
    );

    // ---- the chaos: a worker process every 1–2 s, a coordinator at about 5 s and 11 s
    let creating = true;
    let workerKills = 0;
    let freezes = 0;
    let steps = 0;
    let coordinatorKills = 0;
    const thaws: Promise<void>[] = [];
    const chaos = (async () => {
      const started = Date.now();
      while (creating) {
        await sleep(1000 + random() * 1000);
        if (!creating) break;
        const i = Math.floor(random() * slots.length);
        if (++steps % 2 === 0) {
          // Every other step a freeze, while the chaos goes on: the process's leases expire and its
          // tasks go to others; thawed, it sends its results before it hears that the tasks are no
          // longer its own. They must be refused.
          const frozen = slots[i]!;
          frozen.kill('SIGSTOP');
          freezes++;
          thaws.push(sleep(2200 + random() * 600).then(() => frozen.kill('SIGCONT')));
          continue;
        }
        slots[i]!.kill('SIGKILL');
        await slots[i]!.exited;
        workerKills++;
        startSlot(i);
        const due = coordinatorKills === 0 ? 5000 : 11_000;
        if (coordinatorKills < 2 && Date.now() - started >= due) {
          const c = coordinators[coordinatorKills % 2]!;
          await c.kill('SIGKILL');
          await sleep(300 + random() * 700);
          await c.restart();
          coordinatorKills++;
        }
      }
    })();

    // ---- the tasks
    const kinds = new Map<string, Kind>();
    const keyed: { first: string; again: string; deduplicated: boolean }[] = [];
    const cancelled = new Set<string>();
    const maybeCancelled = new Set<string>();
    const cancels: Promise<void>[] = [];
    const createErrors: unknown[] = [];
    const begin = Date.now();
    for (let n = 0; n < TASKS; n++) {
      const kind = pick(KINDS);
      const req = {
        type: 'chaos',
        payload: { mode: 'chaos', kind, n, ms: Math.floor(random() * 900) },
        maxAttempts: 20,
        resumable: kind === 'resume',
        timing,
        ...(random() < 0.1 ? { idempotencyKey: `chaos-${n}` } : {}),
        ...(random() < 0.05 ? { runAt: Date.now() + 1000 + Math.floor(random() * 2000) } : {}),
      };
      try {
        const { task } = await pick(admins).createTask(req);
        kinds.set(task.id, kind);
        if (req.idempotencyKey !== undefined) {
          const again = await pick(admins).createTask(req);
          keyed.push({ first: task.id, again: again.task.id, deduplicated: again.deduplicated });
        }
        if (random() < 0.04) {
          const admin = pick(admins);
          const delay = Math.floor(random() * 600);
          cancels.push(
            sleep(delay).then(() =>
              admin.cancelTask(task.id, 'chaos').then(
                () => void cancelled.add(task.id),
                (err: unknown) => {
                  // Already final is an answer. A cancel cut off in flight by a coordinator's death
                  // may or may not have been done; anything else is a finding.
                  if (err instanceof RouseNetworkError && !wasNotApplied(err)) maybeCancelled.add(task.id);
                  else if (!(err instanceof RouseApiError && err.code === 'invalid_transition')) throw err;
                },
              ),
            ),
          );
        }
      } catch (err) {
        createErrors.push(err);
      }
      await sleep(Math.max(0, begin + ((n + 1) * CREATE_SECONDS * 1000) / TASKS - Date.now()));
    }
    creating = false;
    await chaos;
    await Promise.all(thaws);
    await Promise.all(cancels);
    expect(workerKills, note).toBeGreaterThanOrEqual(3);
    expect(freezes, note).toBeGreaterThanOrEqual(3);
    expect(coordinatorKills, note).toBe(2);

    // A create can fail only when its coordinator died with the call in flight (it may have been
    // done): never because a coordinator was down or restarting.
    for (const err of createErrors) {
      expect(err, note).toBeInstanceOf(RouseNetworkError);
      expect(wasNotApplied(err), `${note}: ${(err as Error).message}`).toBe(false);
    }

    // ---- the dust settles
    const admin = admins[0]!;
    const listAll = async (): Promise<Task[]> => {
      const all: Task[] = [];
      for (let cursor: string | null | undefined; ; ) {
        const page = await admin.listTasks({ type: 'chaos', limit: 500, ...(cursor ? { cursor } : {}) });
        all.push(...page.tasks);
        cursor = page.nextCursor;
        if (!cursor) return all;
      }
    };
    const tasks = await waitFor(
      async () => {
        const all = await listAll();
        return all.every((t) => t.final) ? all : undefined;
      },
      { what: `every task final (${note})`, timeoutMs: 90_000, intervalMs: 250 },
    );
    // Every task created is there; any other is one whose create was cut off with the call in flight.
    const ids = new Set(tasks.map((t) => t.id));
    for (const id of kinds.keys()) expect(ids.has(id), `${note}: ${id} was created`).toBe(true);
    expect(tasks.length - kinds.size, note).toBeLessThanOrEqual(createErrors.length);
    for (const k of keyed) {
      expect(k.again, `${note}: key of ${k.first}`).toBe(k.first);
      expect(k.deduplicated, note).toBe(true);
    }

    let deafOvertaken = 0;
    let resumed = 0;
    for (const task of tasks) {
      const kind = kinds.get(task.id);
      const what = `${note}: ${kind} task ${task.id} (${task.status}, attempt ${task.attempt})`;
      expect(task.final, what).toBe(true);
      expect(task.leaseExpiresAt, what).toBeNull();
      if (cancelled.has(task.id)) expect(task.status, what).toBe('cancelled');
      else if (maybeCancelled.has(task.id) && task.status === 'cancelled') continue;
      else if (kind === 'fatal') {
        expect(task.status, what).toBe('failed');
        expect(task.error?.code, what).toBe('bad_input');
      } else if (kind !== undefined && task.status !== 'cancelled')
        expect(task.status, what).toBe('completed');

      const result = task.result as { version: number; attempt: number; resumedFrom: unknown } | null;
      if (task.status === 'completed') {
        // The last attempt's result: a late one from an earlier attempt was refused.
        expect(result?.version, what).toBe(task.version);
        expect(result?.attempt, what).toBe(task.attempt);
        const checkpoint = task.checkpoint as { version: number } | null;
        if (kind === 'resume') {
          // Its first attempt to store a checkpoint failed on purpose: the last one resumed from it.
          expect(checkpoint?.version, what).toBeLessThan(task.version);
          expect(result?.resumedFrom, what).toEqual(checkpoint);
          resumed++;
        }
        // Its first attempt's result came after its deadline: a later attempt's is the one kept.
        if (kind === 'deaf' && task.attempt > 1) deafOvertaken++;
      }

      const events = await admin.getTaskEvents(task.id);
      expect(
        events.map((e) => e.seq),
        what,
      ).toEqual(events.map((_, i) => i + 1));
      for (let i = 1; i < events.length; i++) {
        expect(events[i]!.from, `${what}: entry ${i + 1} (${events[i]!.reason})`).toBe(events[i - 1]!.to);
        expect(events[i]!.version, what).toBeGreaterThanOrEqual(events[i - 1]!.version);
      }
      expect(events.at(-1)?.to, what).toBe(task.status);
      expect(events.filter((e) => e.to === 'completed').length, what).toBeLessThanOrEqual(1);
      expect(events.filter((e) => e.to === 'claimed').length, what).toBe(task.attempt);
    }
    // The run exercised what it claims to: attempts overtaken past their deadline, checkpoints resumed.
    expect(deafOvertaken, note).toBeGreaterThan(0);
    expect(resumed, note).toBeGreaterThan(0);
  }, 240_000);
});
