import type { AgentHeartbeatRequest, TaskBeat } from '@rouse/protocol';
import { MAX_HEARTBEAT_BYTES } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import { LeaseLostError, TaskCancelledError } from '../errors.js';
import { jitteredDelayMs } from '../runtime/heartbeat-loop.js';
import type { Recorded } from '../test-support/fake-coordinator.js';
import { deferred, nextEvent, startHarness } from '../test-support/harness.js';
import { splitHeartbeat } from './split-heartbeat.js';

const isBeat = (r: Recorded): boolean => r.path.endsWith('/heartbeat');
const beatTasks = (r: Recorded): TaskBeat[] => (r.body as AgentHeartbeatRequest).tasks ?? [];

describe('heartbeats', () => {
  it('jitters the interval within ±10 %', () => {
    expect(jitteredDelayMs(1000, () => 0)).toBe(900);
    expect(jitteredDelayMs(1000, () => 1)).toBe(1100);
    expect(jitteredDelayMs(1000, () => 0.5)).toBe(1000);
    const samples = Array.from({ length: 2000 }, () => jitteredDelayMs(5000));
    expect(Math.min(...samples)).toBeGreaterThanOrEqual(4500);
    expect(Math.max(...samples)).toBeLessThanOrEqual(5500);
    // actually spread, not constant
    expect(Math.max(...samples) - Math.min(...samples)).toBeGreaterThan(500);
  });

  it('splits a heartbeat that would exceed 4 KiB, metrics in the first part only', () => {
    const tasks = Array.from({ length: 100 }, (_, i) => ({
      taskId: `tsk_01JABCDEFGHJKMNPQRSTVWXYZ${i}`,
      version: i,
      progress: 0.5,
      phase: 'running tests',
    }));
    const req: AgentHeartbeatRequest = { status: 'running', metrics: { rssBytes: 1 }, tasks };
    const parts = splitHeartbeat(req);
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts)
      expect(Buffer.byteLength(JSON.stringify(p))).toBeLessThanOrEqual(MAX_HEARTBEAT_BYTES);
    expect(parts.flatMap((p) => p.tasks ?? [])).toEqual(tasks);
    expect(parts[0]!.metrics).toEqual({ rssBytes: 1 });
    expect(parts.slice(1).every((p) => p.metrics === undefined)).toBe(true);
    expect(splitHeartbeat({ status: 'idle', tasks: tasks.slice(0, 2) })).toHaveLength(1);
  });

  it('sends one agent heartbeat for all held tasks, with progress and process metrics', async () => {
    const release = deferred();
    let started = 0;
    const allStarted = deferred();
    const { fake, worker } = await startHarness({
      concurrency: 3,
      heartbeatIntervalMs: 20,
      handler: async (_task, ctx) => {
        ctx.progress(0.25 * ++started, `step ${started}`);
        if (started === 3) allStarted.resolve();
        await release.promise;
        return null;
      },
    });
    const tasks = [fake.addTask(), fake.addTask(), fake.addTask()];
    await allStarted.promise;
    const beat = await fake.waitForRequest((r) => isBeat(r) && beatTasks(r).length === 3);
    expect(beat.path).toBe('/v1/agents/agt_1/heartbeat');
    const body = beat.body as AgentHeartbeatRequest;
    expect(body.status).toBe('running');
    expect(body.metrics!.rssBytes).toBeGreaterThan(0);
    expect(body.metrics!.cpuPercent).toBeGreaterThanOrEqual(0);
    expect(
      beatTasks(beat)
        .map((b) => b.taskId)
        .sort(),
    ).toEqual(tasks.map((t) => t.id).sort());
    expect(
      beatTasks(beat)
        .map((b) => b.progress)
        .sort(),
    ).toEqual([0.25, 0.5, 0.75]);
    expect(beatTasks(beat).every((b) => b.executionDone === undefined && b.version === 1)).toBe(true);
    // no per-task heartbeat requests
    expect(fake.requests.some((r) => r.path.startsWith('/v1/tasks/') && r.path.endsWith('/heartbeat'))).toBe(
      false,
    );
    release.resolve();
    await fake.waitUntil(() => fake.completed.size === 3);
    expect(worker.agentId).toBe('agt_1');
  });

  it('aborts the handler with LeaseLostError when a heartbeat says the lease is gone, and drops its result', async () => {
    const aborted = deferred<unknown>();
    const { fake, worker } = await startHarness({
      heartbeatIntervalMs: 20,
      handler: async (task, ctx) => {
        if (task.payload === 'quick') return 'quick';
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        aborted.resolve(ctx.signal.reason);
        return { late: task.id }; // a late result: must never be sent
      },
    });
    const lost = nextEvent(worker, 'leaseLost');
    const task = fake.addTask({ version: 3 });
    await fake.waitForRequest((r) => isBeat(r) && beatTasks(r).length === 1);
    fake.stale.add(task.id);
    const [event] = await lost;
    expect(event).toMatchObject({ task: { id: task.id }, code: 'stale_version' });
    const reason = await aborted.promise;
    expect(reason).toBeInstanceOf(LeaseLostError);
    expect(reason).toMatchObject({ taskId: task.id, version: 3 });
    // the worker keeps going: the next task completes, the lost one never does
    const next = fake.addTask({ payload: 'quick' });
    await fake.waitUntil(() => fake.completed.has(next.id));
    expect(fake.completed.has(task.id)).toBe(false);
    expect(fake.requests.some((r) => r.path === `/v1/tasks/${task.id}/complete`)).toBe(false);
  });

  it('treats a refused completion (409 stale_version) as a lost lease', async () => {
    const { fake, worker } = await startHarness({ handler: async () => 'late' });
    const lost = nextEvent(worker, 'leaseLost');
    let completedEvents = 0;
    worker.on('completed', () => completedEvents++);
    const task = fake.addTask();
    fake.stale.add(task.id);
    const [event] = await lost;
    expect(event).toMatchObject({ task: { id: task.id }, code: 'stale_version' });
    expect(completedEvents).toBe(0);
  });

  it('aborts on a cancel command without reporting, and runs onWake on a wake command', async () => {
    const woke = deferred<{ reason: string | undefined; interrupted: boolean }>();
    const aborted = deferred<unknown>();
    const { fake, worker } = await startHarness({
      concurrency: 2,
      heartbeatIntervalMs: 20,
      handler: async (task, ctx) => {
        if ((task.payload as { role: string }).role === 'sleeper') {
          ctx.onWake((reason) => woke.resolve({ reason, interrupted: ctx.interrupted }));
          await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
          return null;
        }
        await ctx.sleep(60_000).catch((err: unknown) => aborted.resolve(err));
        return 'cancelled work';
      },
    });
    const cancelled = nextEvent(worker, 'cancelled');
    const victim = fake.addTask({ payload: { role: 'victim' } });
    const sleeper = fake.addTask({ payload: { role: 'sleeper' } });
    await fake.waitForRequest((r) => isBeat(r) && beatTasks(r).length === 2);
    fake.commands.push(
      { type: 'cancel', taskId: victim.id, reason: 'user asked' },
      { type: 'wake', taskId: sleeper.id, reason: 'stalled' },
    );
    const [event] = await cancelled;
    expect(event).toMatchObject({ task: { id: victim.id }, reason: 'user asked' });
    expect(await aborted.promise).toBeInstanceOf(TaskCancelledError);
    expect(await woke.promise).toEqual({ reason: 'stalled', interrupted: true });
    // the cancelled task is no longer beaten for and never reported
    const after = fake.requests.length;
    await fake.waitForRequest((r) => isBeat(r) && beatTasks(r).length === 1, after);
    expect(fake.completed.has(victim.id)).toBe(false);
    expect(fake.failed.has(victim.id)).toBe(false);
  });
});
