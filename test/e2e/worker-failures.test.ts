/**
 * Issue tests 2, 3 and 6 with real worker processes and real signals:
 * - a worker SIGKILLed mid-task: the task times out and completes on another worker;
 * - a worker frozen (SIGSTOP) past its lease: its late result is fenced, its signal aborted, the new
 *   holder's result stands;
 * - a resumable task's second attempt receives the first attempt's checkpoint and session.
 */
import { Client } from '@rouse/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CoordinatorProcess, startCoordinatorProcess } from '../harness/coordinator-process.js';
import { waitFor } from '../harness/wait.js';
import { startWorkerProcess } from '../harness/worker-process.js';

let coord: CoordinatorProcess;
let admin: Client;
beforeAll(async () => {
  coord = await startCoordinatorProcess();
  admin = new Client({ url: coord.url, token: coord.adminToken });
});
afterAll(async () => {
  await coord?.kill('SIGTERM');
});

const fastTiming = { heartbeatIntervalMs: 200, timeoutFactor: 3 };

async function waitForStatus(id: string, status: string, timeoutMs = 20_000) {
  return waitFor(
    async () => {
      const t = await admin.getTask(id);
      return t.status === status ? t : undefined;
    },
    { timeoutMs, what: `task ${id} to be ${status}` },
  );
}

describe('worker failures', () => {
  it('a SIGKILLed worker: the task times out, then runs on another worker and completes', async () => {
    const a = startWorkerProcess(coord, { name: 'a', types: ['kill2'] });
    await a.waitFor('started');
    const { task } = await admin.createTask({
      type: 'kill2',
      payload: { mode: 'sleep', ms: 600 },
      timing: fastTiming,
    });
    await a.waitFor('claimed', task.id);
    a.kill('SIGKILL');
    await a.exited;
    const timedOut = await waitForStatus(task.id, 'timeout');
    expect(timedOut.error?.code).toBe('heartbeat_timeout');
    expect(timedOut.nextAttemptAt).not.toBeNull();
    const timeoutEvent = (await admin.getTaskEvents(task.id)).find((e) => e.to === 'timeout')!;
    expect(timeoutEvent.actor).toBe('coordinator');
    // Detected one heartbeat timeout after the last heartbeat, not a scan interval later.
    expect(timeoutEvent.at - timedOut.lastHeartbeatAt!).toBeGreaterThanOrEqual(600);
    const b = startWorkerProcess(coord, { name: 'b', types: ['kill2'] });
    await b.waitFor('completed', task.id);
    const done = await admin.getTask(task.id);
    expect(done.status).toBe('completed');
    expect(done.attempt).toBe(2);
    expect(done.result).toEqual({ by: 'b' });
    b.kill('SIGTERM');
    await b.exited;
  });

  it('a worker stopped by SIGTERM hands a task it could not finish back at once (timeout, no backoff), not as a failure', async () => {
    const a = startWorkerProcess(coord, { name: 'a', types: ['term2'], shutdownGraceMs: 100 });
    await a.waitFor('started');
    const { task } = await admin.createTask({
      type: 'term2',
      payload: { mode: 'hang-first' },
      timing: fastTiming,
    });
    await a.waitFor('hanging', task.id);
    a.kill('SIGTERM');
    expect(await a.exited).toMatchObject({ code: 0 });
    expect(a.events().some((e) => e.event === 'failed')).toBe(false);
    const handedBack = await admin.getTask(task.id);
    expect(handedBack).toMatchObject({ status: 'timeout', attempt: 1, final: false });
    const event = (await admin.getTaskEvents(task.id)).find((e) => e.to === 'timeout')!;
    // Claimable at once: a failure would wait out the backoff (1 s by default).
    expect(handedBack.nextAttemptAt! - event.at).toBeLessThan(100);
    const b = startWorkerProcess(coord, { name: 'b', types: ['term2'] });
    await b.waitFor('completed', task.id);
    expect(await admin.getTask(task.id)).toMatchObject({ status: 'completed', attempt: 2 });
    b.kill('SIGTERM');
    await b.exited;
  });

  it('a frozen worker loses its lease: late result rejected, signal aborted, the new holder wins', async () => {
    const a = startWorkerProcess(coord, { name: 'frozen', types: ['fence'] });
    await a.waitFor('started');
    const { task } = await admin.createTask({
      type: 'fence',
      payload: { mode: 'timer', ms: 1500 },
      timing: fastTiming,
    });
    const first = await a.waitFor('working', task.id);
    a.kill('SIGSTOP');
    await waitForStatus(task.id, 'timeout');
    const b = startWorkerProcess(coord, { name: 'rescuer', types: ['fence'] });
    await b.waitFor('completed', task.id, 30_000);
    a.kill('SIGCONT');
    const lost = await a.waitFor('leaseLost', task.id);
    expect(lost.code).toBe('stale_version');
    // Whether the heartbeat or the late complete told it first, its signal fired with LeaseLostError.
    const aborted = await a.waitFor('aborted', task.id);
    expect(aborted.reason).toBe('LeaseLostError');

    // The stale version can never complete the task, whoever sends it.
    await expect(
      admin.completeTask(task.id, { version: first.version!, result: { by: 'frozen' } }),
    ).rejects.toMatchObject({
      status: 409,
      code: 'stale_version',
    });
    const done = await admin.getTask(task.id);
    expect(done.status).toBe('completed');
    expect(done.result).toEqual({ by: 'rescuer', attempt: 2 });
    expect(a.events().some((e) => e.event === 'completed' && e.taskId === task.id)).toBe(false);
    const completions = (await admin.getTaskEvents(task.id)).filter((e) => e.to === 'completed');
    expect(completions).toHaveLength(1);
    a.kill('SIGTERM');
    b.kill('SIGTERM');
    await Promise.all([a.exited, b.exited]);
  });

  it('a resumable task’s second attempt gets the first attempt’s checkpoint and session', async () => {
    const a = startWorkerProcess(coord, { name: 'first', types: ['resume'] });
    await a.waitFor('started');
    const { task } = await admin.createTask({
      type: 'resume',
      payload: { mode: 'resumable' },
      resumable: true,
      timing: fastTiming,
    });
    await a.waitFor('checkpointed', task.id);
    a.kill('SIGKILL');
    await a.exited;
    const b = startWorkerProcess(coord, { name: 'second', types: ['resume'] });
    const resumed = await b.waitFor('resumed', task.id, 30_000);
    expect(resumed.attempt).toBe(2);
    expect(resumed.state).toEqual({ step: 1, note: 'halfway' });
    expect(resumed.session).toEqual({ threadId: 'thr-42' });
    await b.waitFor('completed', task.id);
    const done = await admin.getTask(task.id);
    expect(done.result).toMatchObject({ resumedFrom: { step: 1 }, session: { threadId: 'thr-42' } });
    b.kill('SIGTERM');
    await b.exited;
  });
});
