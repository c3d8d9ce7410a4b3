/**
 * Agent snapshots end to end, with real processes: an SDK monitor process with slot key K stores its
 * state, answers an operator's `checkpoint` at its next safe point, and is SIGKILLed; a new process
 * registering with key K is the slot's next incarnation and starts from that snapshot.
 */
import { fileURLToPath } from 'node:url';
import { Client } from '@rouse/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { type CoordinatorProcess, startCoordinatorProcess } from '../harness/coordinator-process.js';
import { type Spawned, spawnNode } from '../harness/processes.js';
import { waitFor } from '../harness/wait.js';

const MONITOR = fileURLToPath(new URL('../fixtures/monitor-agent.mjs', import.meta.url));

interface Line {
  event: string;
  [key: string]: unknown;
}

let coord: CoordinatorProcess | undefined;
afterEach(async () => {
  await coord?.kill('SIGTERM');
  coord = undefined;
});

function startMonitor(c: CoordinatorProcess, key: string): Spawned {
  return spawnNode([MONITOR], { ROUSE_URL: c.url, ROUSE_TOKEN: c.agentToken, ROUSE_AGENT_KEY: key });
}

const event = (name: string) => (m: Line) => typeof m === 'object' && m !== null && m.event === name;

describe('agent snapshots, end to end', () => {
  it('a SIGKILLed agent’s next incarnation starts from its snapshot, checkpoint included', async () => {
    coord = await startCoordinatorProcess();
    const admin = new Client({ url: coord.url, token: coord.adminToken });
    const first = startMonitor(coord, 'host-1/bot-1');
    const started = await first.waitForLine<Line>(event('started'));
    expect(started).toMatchObject({ incarnation: 1, restored: null });
    const agentId = String(started.agentId);
    await first.waitForLine<Line>(event('snapshotted'));
    expect(await admin.getSnapshot(agentId)).toMatchObject({ state: { turn: 3 }, version: 1 });

    // An operator (or the watchdog's snapshot_and_restart) asks for a checkpoint: taken at a safe point.
    await admin.sendCommand(agentId, { type: 'checkpoint', reason: 'before a restart' });
    const checkpointed = await first.waitForLine<Line>(event('checkpointed'));
    const saved = await waitFor(
      async () => {
        const s = await admin.getSnapshot(agentId);
        return s !== null && s.version >= 2 ? s : null;
      },
      { what: 'the checkpoint snapshot' },
    );
    expect(saved.state.turn).toBeGreaterThanOrEqual(Number(checkpointed.turn));
    expect(saved.state.turn).toBeGreaterThan(3);

    first.kill('SIGKILL');
    await first.exited;
    const left = await admin.getSnapshot(agentId);

    const second = startMonitor(coord, 'host-1/bot-1');
    const restarted = await second.waitForLine<Line>(event('started'));
    expect(restarted).toMatchObject({ agentId, incarnation: 2, restored: left!.state });
    second.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  });
});
