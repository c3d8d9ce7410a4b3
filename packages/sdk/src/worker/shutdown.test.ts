import { describe, expect, it } from 'vitest';
import { LeaseLostError, WorkerShutdownError } from '../errors.js';
import type { Recorded } from '../test-support/fake-coordinator.js';
import { deferred, nextEvent, startHarness } from '../test-support/harness.js';

const isBeat = (r: Recorded): boolean => r.path.endsWith('/heartbeat');

describe('graceful shutdown', () => {
  it('stops claiming, keeps beating while the handler finishes, reports, leaves, removes its signal handlers', async () => {
    const before = process.listenerCount('SIGTERM');
    const release = deferred();
    const started = deferred();
    const { fake, worker } = await startHarness({
      heartbeatIntervalMs: 20,
      shutdownSignals: ['SIGTERM'],
      handler: async () => {
        started.resolve();
        await release.promise;
        return 'finished in grace';
      },
    });
    expect(process.listenerCount('SIGTERM')).toBe(before + 1);
    const task = fake.addTask();
    await started.promise;

    let stopped = false;
    const stopping = worker.stop().then(() => {
      stopped = true;
    });
    const stopAt = fake.requests.length;
    // still heartbeating for the running task during the grace period
    const beat = await fake.waitForRequest(
      (r) => isBeat(r) && ((r.body as { tasks?: unknown[] }).tasks ?? []).length === 1,
      stopAt,
    );
    expect(beat).toBeDefined();
    expect(stopped).toBe(false);
    release.resolve();
    await stopping;

    const after = fake.requests.slice(stopAt);
    expect(after.some((r) => r.path.endsWith('/claim'))).toBe(false);
    const completeIdx = after.findIndex((r) => r.path === `/v1/tasks/${task.id}/complete`);
    const leaveIdx = after.findIndex((r) => r.method === 'DELETE' && r.path === '/v1/agents/agt_1');
    expect(completeIdx).toBeGreaterThanOrEqual(0);
    expect(leaveIdx).toBeGreaterThan(completeIdx);
    expect(fake.completed.get(task.id)?.result).toBe('finished in grace');
    expect(process.listenerCount('SIGTERM')).toBe(before);
    // stop() is idempotent
    await worker.stop();
  });

  it('aborts handlers still running after shutdownGraceMs and leaves, which hands their tasks back (no failure)', async () => {
    const aborted = deferred<unknown>();
    const started = deferred();
    const { fake, worker } = await startHarness({
      shutdownGraceMs: 30,
      handler: async (_task, ctx) => {
        ctx.signal.addEventListener('abort', () => aborted.resolve(ctx.signal.reason));
        started.resolve();
        await new Promise(() => {}); // never finishes
      },
    });
    const task = fake.addTask();
    await started.promise;
    const stopped = nextEvent(worker, 'stopped');
    await worker.stop();
    await stopped;
    expect(await aborted.promise).toBeInstanceOf(WorkerShutdownError);
    // A failure would wait out the task's backoff; the leave gives it back at once.
    expect(fake.failed.has(task.id)).toBe(false);
    expect(fake.requests.at(-1)).toMatchObject({ method: 'DELETE', path: '/v1/agents/agt_1' });
  });

  it('stops on SIGTERM and on a terminate command', async () => {
    const before = process.listenerCount('SIGTERM');
    const first = await startHarness({ shutdownSignals: ['SIGTERM'], handler: async () => null });
    const ours = process.listeners('SIGTERM').at(-1)!;
    const stoppedBySignal = nextEvent(first.worker, 'stopped');
    ours('SIGTERM');
    await stoppedBySignal;
    expect(process.listenerCount('SIGTERM')).toBe(before);
    expect(first.fake.requests.some((r) => r.method === 'DELETE')).toBe(true);

    const second = await startHarness({ heartbeatIntervalMs: 20, handler: async () => null });
    second.fake.commands.push({ type: 'terminate', reason: 'policy' });
    await nextEvent(second.worker, 'stopped');
    expect(second.fake.requests.some((r) => r.method === 'DELETE')).toBe(true);
  });
});

describe('a refused agent token', () => {
  it('aborts running handlers with LeaseLostError (unauthorized), reports nothing for them and stops for good', async () => {
    const started = deferred();
    const reason = deferred<unknown>();
    const { fake, worker } = await startHarness({
      heartbeatIntervalMs: 20,
      concurrency: 2,
      handler: async (_task, ctx) => {
        started.resolve();
        ctx.signal.addEventListener('abort', () => reason.resolve(ctx.signal.reason));
        await new Promise(() => {}); // ignores the signal: nothing may be reported for it anyway
      },
    });
    const task = fake.addTask();
    await started.promise;
    const lost = nextEvent(worker, 'leaseLost');
    const stopped = nextEvent(worker, 'stopped');
    // the agent was ended (`client.leave(agentId)`) or its slot registered again: its token is refused
    const refusedFrom = fake.requests.length;
    fake.override = (r, res) => {
      if (r.headers.authorization !== `Bearer ${fake.agentToken}`) return false;
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'unauthorized', message: 'unknown or revoked token' } }));
      return true;
    };
    const why = await reason.promise;
    expect(why).toBeInstanceOf(LeaseLostError);
    expect(why).toMatchObject({ code: 'unauthorized', taskId: task.id, version: task.version });
    expect((why as Error).message).not.toMatch(/requeued/);
    expect((await lost)[0]).toMatchObject({ task: { id: task.id }, code: 'unauthorized' });
    await stopped;
    const sent = fake.requests.slice(refusedFrom);
    expect(sent.some((r) => r.path.endsWith('/fail') || r.path.endsWith('/complete'))).toBe(false);
    expect(fake.failed.has(task.id)).toBe(false);
  });
});
