/**
 * A person's commands to a real SDK worker process, end to end: `wake` is acknowledged `done` (the
 * intervention succeeds), `restart` — which a worker outside a supervisor cannot do — `unsupported`
 * (skipped), and `terminate` stops the worker, which leaves: the intervention succeeds. The answer
 * goes as soon as the worker has the command, not with its next heartbeat.
 */
import { Client } from '@rouse/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { startCoordinatorProcess } from '../harness/coordinator-process.js';
import { waitFor } from '../harness/wait.js';
import { startWorkerProcess } from '../harness/worker-process.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('manual interventions on a real worker', () => {
  it('wake succeeds, restart is skipped as unsupported, terminate succeeds once the worker has left', async () => {
    const coord = await startCoordinatorProcess();
    cleanups.push(() => coord.kill('SIGTERM'));
    const admin = new Client({ url: coord.url, token: coord.adminToken });
    const w = startWorkerProcess(coord, { name: 'obedient', heartbeatMs: 200 });
    cleanups.push(async () => {
      w.kill('SIGKILL');
      await w.exited;
    });
    const agentId = String((await w.waitFor('started')).agentId);

    const ended = (id: string) =>
      waitFor(
        async () => {
          const i = await admin.getIntervention(id);
          return i.state === 'pending' ? null : i;
        },
        { what: `intervention ${id} to end`, timeoutMs: 10_000 },
      );

    const wake = await admin.sendCommand(agentId, { type: 'wake', reason: 'look up' });
    expect(await ended(wake.intervention!.id)).toMatchObject({ state: 'succeeded', action: 'wake' });
    const restart = await admin.sendCommand(agentId, { type: 'restart' });
    const skipped = await ended(restart.intervention!.id);
    expect(skipped).toMatchObject({ state: 'skipped', action: 'snapshot_and_restart' });
    expect(skipped.reason).toContain('does not act on restart');
    const terminate = await admin.sendCommand(agentId, { type: 'terminate', reason: 'done for today' });
    await w.waitFor('stopped', undefined, 10_000);
    expect(await ended(terminate.intervention!.id)).toMatchObject({
      state: 'succeeded',
      action: 'terminate',
    });
    expect((await admin.getAgent(agentId)).status).toBe('left');
  });

  it('answers a command as soon as it has it, without waiting for its next heartbeat', async () => {
    const coord = await startCoordinatorProcess();
    cleanups.push(() => coord.kill('SIGTERM'));
    const admin = new Client({ url: coord.url, token: coord.adminToken });
    const w = startWorkerProcess(coord, { name: 'prompt', heartbeatMs: 2000, printHeartbeats: true });
    cleanups.push(async () => {
      w.kill('SIGKILL');
      await w.exited;
    });
    const agentId = String((await w.waitFor('started')).agentId);
    const wake = await admin.sendCommand(agentId, { type: 'wake', reason: 'look up' });
    const delivered = await w.waitFor('command', undefined, 10_000);
    expect(delivered).toMatchObject({ type: 'wake', commandId: wake.commandId });
    const ended = await waitFor(
      async () => {
        const i = await admin.getIntervention(wake.intervention!.id);
        return i.state === 'pending' ? null : i;
      },
      { what: 'the wake to be answered', timeoutMs: 10_000 },
    );
    expect(ended).toMatchObject({ state: 'succeeded', action: 'wake' });
    // The answer went on a call of its own: the next heartbeat (about 2 s later) did not carry it.
    const next = await waitFor(
      async () =>
        w.events().find((e) => e.event === 'heartbeat' && Number(e.at) > Number(delivered.at)) ?? null,
      { what: 'the next heartbeat', timeoutMs: 10_000 },
    );
    expect(ended.endedAt!).toBeLessThan(Number(next.at));
    const carried = w.events().flatMap((e) => (e.event === 'heartbeat' ? (e.acks as string[]) : []));
    expect(carried).not.toContain(wake.commandId);
  });
});
