import { describe, expect, it } from 'vitest';
import { TaskCancelledError } from '../errors.js';
import { deferred, nextEvent, startHarness, within } from '../test-support/harness.js';

/** Everything a worker says about one task, in order. */
function recordOutcomes(worker: Awaited<ReturnType<typeof startHarness>>['worker']): string[] {
  const seen: string[] = [];
  worker.on('cancelled', ({ task, reason }) => seen.push(`cancelled ${task.id} ${reason ?? ''}`.trim()));
  worker.on('leaseLost', ({ task, code }) => seen.push(`leaseLost ${task.id} ${code}`));
  worker.on('completed', ({ task }) => seen.push(`completed ${task.id}`));
  worker.on('failed', ({ task }) => seen.push(`failed ${task.id}`));
  return seen;
}

describe('a task cancelled by an operator', () => {
  it('is reported as cancelled when a heartbeat finds it cancelled: the signal aborts, nothing is written', async () => {
    const aborted = deferred<unknown>();
    const { fake, worker } = await startHarness({
      heartbeatIntervalMs: 20,
      handler: async (task, ctx) => {
        if (task.payload === 'quick') return 'ok';
        await ctx.sleep(60_000).catch((err: unknown) => aborted.resolve(err));
        return 'too late';
      },
    });
    const seen = recordOutcomes(worker);
    const cancelled = nextEvent(worker, 'cancelled');
    const task = fake.addTask();
    await within(
      5000,
      fake.waitUntil(() => fake.taskProgress.has(task.id)),
      'a beat',
    ); // beaten for at least once
    fake.cancelled.add(task.id); // the next beat answers `cancelled` (and a cancel command)
    await within(5000, cancelled, 'cancelled');
    const reason = await within(5000, aborted.promise, 'the abort');
    expect(reason).toBeInstanceOf(TaskCancelledError);
    expect(reason).toMatchObject({ code: 'cancelled', taskId: task.id });
    // the next task runs; nothing was ever written for the cancelled one
    const next = fake.addTask({ payload: 'quick' });
    await within(
      5000,
      fake.waitUntil(() => fake.completed.has(next.id)),
      'next',
    );
    await within(5000, worker.stop(), 'stop');
    expect(seen).toEqual([`cancelled ${task.id} the task was cancelled`, `completed ${next.id}`]);
    expect(fake.requests.filter((r) => r.path.startsWith(`/v1/tasks/${task.id}/`))).toEqual([]);
  });

  it('is reported as cancelled, not as a lost lease, when its handler ended first (completion refused, via a claim or directly)', async () => {
    const release = deferred();
    const { fake, worker } = await startHarness({
      concurrency: 2,
      handler: async (task) => {
        await release.promise;
        if (task.payload === 'throws') throw new Error('it broke anyway');
        return 'done';
      },
    });
    const seen = recordOutcomes(worker);
    const both = new Promise<void>((resolve) => {
      let n = 0;
      worker.on('cancelled', () => {
        if (++n === 2) resolve();
      });
    });
    const completes = fake.addTask({ payload: 'returns' });
    const fails = fake.addTask({ payload: 'throws' });
    await fake.waitUntil(() => fake.queue.length === 0);
    fake.cancelled.add(completes.id);
    fake.cancelled.add(fails.id);
    release.resolve();
    await within(5000, both, 'two cancelled events');
    expect(seen.sort()).toEqual([`cancelled ${completes.id}`, `cancelled ${fails.id}`]);
    // the completion rode a claim (refused without details), then went directly and was told why
    const paths = fake.requests.map((r) => r.path);
    expect(paths).toContain(`/v1/tasks/${completes.id}/complete`);
    expect(paths).toContain(`/v1/tasks/${fails.id}/fail`);
    expect(fake.completed.has(completes.id) || fake.failed.has(fails.id)).toBe(false);
  });
});
