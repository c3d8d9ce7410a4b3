/**
 * Issue 9, test 6 with real SDK worker processes: a second process registering under the same agent
 * key is the slot's next incarnation — the first one's task times out at once and is retried (by the
 * new incarnation), and the first process, whose token the coordinator now refuses, stops by itself.
 */
import { Client } from '@rouse/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { type CoordinatorProcess, startCoordinatorProcess } from '../harness/coordinator-process.js';
import { startWorkerProcess } from '../harness/worker-process.js';

let coord: CoordinatorProcess | undefined;
afterEach(async () => {
  await coord?.kill('SIGTERM');
  coord = undefined;
});

describe('agent keys and incarnations, end to end', () => {
  it('the new incarnation takes over: the old one’s task is retried at once and the old process stops', async () => {
    coord = await startCoordinatorProcess();
    const admin = new Client({ url: coord.url, token: coord.adminToken });
    const first = startWorkerProcess(coord, { key: 'host-3/reviewer-1', heartbeatMs: 200 });
    const { agentId } = await first.waitFor('started');
    const { task } = await admin.createTask({ type: 'e2e', payload: { mode: 'hang-first' } });
    await first.waitFor('hanging', task.id);

    const second = startWorkerProcess(coord, { key: 'host-3/reviewer-1', heartbeatMs: 200 });
    const started = await second.waitFor('started');
    expect(started.agentId).toBe(agentId);
    expect((await admin.getAgent(String(agentId))).incarnation).toBe(2);

    // The replaced process learns on its next heartbeat that its token is refused, and stops.
    await first.waitFor('stopped', undefined, 10_000);
    const exited = await first.exited;
    expect(exited.code).toBe(0);

    // The task was timed out at once (no backoff) and completed by the new incarnation.
    await second.waitFor('completed', task.id, 15_000);
    const done = await admin.getTask(task.id);
    expect(done).toMatchObject({ status: 'completed', attempt: 2, agentId });
    const history = await admin.getTaskEvents(task.id);
    const replaced = history.find((e) => e.to === 'timeout');
    expect(replaced).toMatchObject({ reason: 'agent_replaced' });
    const retried = history.find((e) => e.from === 'timeout');
    expect(retried!.at - replaced!.at).toBeLessThan(5000);
    second.kill('SIGTERM');
    await second.exited;
  });
});
