/**
 * Issue 10, test 7: reassign. An agent holds a running task and keeps heartbeating, but the task's
 * progress never moves; the ladder's `reassign` times the task out at once (fenced by its version) and
 * puts it back in the queue; a real SDK worker process takes it and completes it; the stuck holder's
 * late complete is refused. The stuck holder speaks HTTP from the test (so its refused write can be
 * seen); the coordinator and the other worker are real processes.
 */
import type { Intervention, Task } from '@rouse/protocol';
import { Client } from '@rouse/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { type CoordinatorProcess, startCoordinatorProcess } from '../harness/coordinator-process.js';
import { writePolicyFile } from '../harness/policy-file.js';
import { waitFor } from '../harness/wait.js';
import { startWorkerProcess, type WorkerProcess } from '../harness/worker-process.js';

const POLICY = `
policies:
  - name: e2e
    agent_type: e2e
    heartbeat: { expected_interval: 200ms, timeout_factor: 10 }
    recovery_actions:
      - action: reassign
        on_condition: stall_detected
        timeout: 20s
`;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('reassign', () => {
  it("takes a stuck holder's task away: another agent completes it, the stale holder's late complete is refused", async () => {
    const coord: CoordinatorProcess = await startCoordinatorProcess({
      extraArgs: ['--policies', writePolicyFile(POLICY)],
    });
    cleanups.push(() => coord.kill('SIGTERM'));
    const admin = new Client({ url: coord.url, token: coord.adminToken });
    const enroll = new Client({ url: coord.url, token: coord.agentToken });

    // The stuck holder: claims and starts the task, then beats with a progress that never moves.
    const reg = await enroll.registerAgent({ agentType: 'e2e', name: 'stuck', taskTypes: ['e2e'] });
    const stuck = enroll.withToken(reg.token);
    const { task } = await admin.createTask({
      type: 'e2e',
      payload: { mode: 'noop' },
      timing: { stallTimeoutMs: 1000 },
    });
    const [held] = (await stuck.claim(reg.agent.id, { types: ['e2e'], start: true })).tasks as Task[];
    expect(held?.id).toBe(task.id);
    let beating = true;
    const beats = (async () => {
      while (beating) {
        const res = await stuck.agentHeartbeat(reg.agent.id, {
          status: 'running',
          tasks: [{ taskId: task.id, version: held!.version, progress: 0.1 }],
        });
        if (res.tasks.some((t) => !t.ok)) return res.tasks;
        await new Promise((r) => setTimeout(r, 200));
      }
      return [];
    })();
    cleanups.push(async () => {
      beating = false;
      await beats.catch(() => undefined);
    });

    // The ladder reassigns: the task times out now, and the holder's next beat is told so.
    const refusedBeat = await beats;
    expect(refusedBeat).toEqual([expect.objectContaining({ taskId: task.id, ok: false })]);
    const [moving] = (await admin.listInterventions({ agentId: reg.agent.id }))
      .interventions as Intervention[];
    expect(moving).toMatchObject({
      condition: 'progress_stalled',
      taskId: task.id,
      action: 'reassign',
      evidence: { reassignedTaskIds: [task.id] },
    });
    expect(await admin.getTask(task.id)).toMatchObject({
      status: 'timeout',
      error: { code: 'agent_reassigned' },
    });

    // Another agent, a real SDK worker, takes it and completes it.
    const worker: WorkerProcess = startWorkerProcess(coord, { name: 'rescuer' });
    cleanups.push(async () => {
      worker.kill('SIGTERM');
      await worker.exited;
    });
    const completed = await worker.waitFor('completed', task.id, 15_000);
    expect(completed.taskId).toBe(task.id);
    expect(await admin.getTask(task.id)).toMatchObject({ status: 'completed', result: { by: 'rescuer' } });

    // The stale holder's late complete is refused, and changes nothing.
    const late = await stuck.completeTask(task.id, { version: held!.version, result: { by: 'stuck' } }).then(
      () => null,
      (err: unknown) => err as { status?: number; code?: string },
    );
    expect(late).toMatchObject({ status: 409 });
    expect(['stale_version', 'invalid_transition']).toContain(late?.code);
    expect((await admin.getTask(task.id)).result).toEqual({ by: 'rescuer' });

    const ended = await waitFor(
      async () => {
        const i = await admin.getIntervention(moving!.id);
        return i.state === 'pending' ? null : i;
      },
      { what: 'the reassignment to end', timeoutMs: 10_000, intervalMs: 100 },
    );
    expect(ended).toMatchObject({ state: 'succeeded', reason: 'another agent took the task' });
  });
});
