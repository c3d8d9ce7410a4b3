/**
 * Issue tests 7 and 8 with real processes:
 * - `executionDone` then a write-back that does not arrive: the task is not declared dead within the
 *   write-back grace (the diagnosis says so), and the result lands when the agent comes back;
 * - the coordinator SIGKILLed and restarted on the same data directory: no task lost, leases honoured
 *   with a grace, running workers carry on, and the SDK's spool delivers the result it could not write.
 */
import { Client } from '@rouse/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { type CoordinatorProcess, startCoordinatorProcess } from '../harness/coordinator-process.js';
import { waitFor } from '../harness/wait.js';
import { startWorkerProcess } from '../harness/worker-process.js';

const fastTiming = { heartbeatIntervalMs: 200, timeoutFactor: 3 };
let coord: CoordinatorProcess | undefined;
afterEach(async () => {
  await coord?.kill('SIGTERM');
  coord = undefined;
});

describe('write-back and coordinator restart', () => {
  it('execution done but write-back late: not dead within the grace, then completed', async () => {
    coord = await startCoordinatorProcess();
    const admin = new Client({ url: coord.url, token: coord.adminToken });
    const w = startWorkerProcess(coord, { name: 'slow-writer', types: ['wb'] });
    await w.waitFor('started');
    const { task } = await admin.createTask({
      type: 'wb',
      payload: { mode: 'write-back', value: 7 },
      timing: fastTiming,
    });
    await w.waitFor('executionDone', task.id);
    await waitFor(async () => (await admin.getTask(task.id)).executionDone, {
      what: 'executionDone to reach the coordinator',
    });

    // Freeze the agent for several heartbeat timeouts (600 ms each).
    w.kill('SIGSTOP');
    const frozenAt = Date.now();
    await waitFor(() => Date.now() - frozenAt > 2000, { what: 'the freeze' });
    const during = await admin.getTask(task.id);
    expect(during.status).toBe('running');
    const why = await admin.diagnose(task.id);
    expect(why.reasons.map((r) => r.code)).toContain('awaiting_write_back');

    w.kill('SIGCONT');
    w.kill('SIGUSR2');
    await w.waitFor('completed', task.id);
    const done = await admin.getTask(task.id);
    expect(done.status).toBe('completed');
    expect(done.result).toEqual({ by: 'slow-writer', value: 7 });
    expect((await admin.getTaskEvents(task.id)).map((e) => e.to)).toEqual([
      'created',
      'claimed',
      'running',
      'completed',
    ]);
    w.kill('SIGTERM');
    await w.exited;
  });

  it('coordinator SIGKILLed and restarted: nothing lost, leases honoured, spool delivers', async () => {
    coord = await startCoordinatorProcess();
    const admin = new Client({ url: coord.url, token: coord.adminToken });
    const w = startWorkerProcess(coord, { name: 'steady', types: ['steady'], concurrency: 4 });
    await w.waitFor('started');

    const queued = await admin.createTasks(
      Array.from({ length: 20 }, (_, i) => ({
        type: 'nobody-polls',
        payload: { i },
        labels: { batch: 'restart' },
      })),
    );
    const sleepers = await admin.createTasks(
      Array.from({ length: 3 }, () => ({
        type: 'steady',
        payload: { mode: 'sleep', ms: 4000 },
        timing: fastTiming,
      })),
    );
    const { task: wb } = await admin.createTask({
      type: 'steady',
      payload: { mode: 'write-back', value: 99 },
      timing: fastTiming,
    });
    await w.waitFor('executionDone', wb.id);
    for (const s of sleepers) await w.waitFor('claimed', s.id);
    await waitFor(async () => (await admin.getTask(wb.id)).executionDone, {
      what: 'executionDone to reach the coordinator',
    });

    await coord.kill('SIGKILL');
    // The result is ready while the coordinator is gone: it must go to the spool.
    w.kill('SIGUSR2');
    await w.waitFor('spooled', wb.id, 30_000);
    await coord.restart();

    const delivered = await w.waitFor('spoolDelivered', wb.id, 30_000);
    expect(delivered.outcome).toBe('delivered');
    for (const s of sleepers) await w.waitFor('completed', s.id, 30_000);

    const wbDone = await admin.getTask(wb.id);
    expect(wbDone.status).toBe('completed');
    expect(wbDone.result).toEqual({ by: 'steady', value: 99 });
    for (const s of sleepers) {
      const t = await admin.getTask(s.id);
      expect(t.status).toBe('completed');
      expect(t.attempt).toBe(1);
      const path = (await admin.getTaskEvents(s.id)).map((e) => e.to);
      expect(path).toEqual(['created', 'claimed', 'running', 'completed']);
    }
    for (const q of queued) expect((await admin.getTask(q.id)).status).toBe('created');
    w.kill('SIGTERM');
    await w.exited;
  });
});
