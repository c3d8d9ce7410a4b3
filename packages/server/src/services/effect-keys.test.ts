/**
 * Effect keys in the coordinator (manual clock, real SQLite): the holder check before a claim, and
 * the sweep that deletes expired keys (on demand and every `effectSweepIntervalMs`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN, type CoordinatorFixture, createFixture } from '../test-support/coordinator-fixture.js';

let f: CoordinatorFixture;
afterEach(async () => {
  await f.close();
});

describe('effect keys in the coordinator', () => {
  it('a claimed task (not started) or a finished one cannot claim; the admin acts as the holder', async () => {
    f = await createFixture();
    const agent = await f.register();
    await f.create();
    const claimed = await f.claimOne(agent);
    await expect(
      f.coordinator.claimEffect(agent.caller, claimed.id, 'k', { version: claimed.version }),
    ).rejects.toMatchObject({ code: 'stale_version' });
    const task = await f.coordinator.startTask(agent.caller, claimed.id, claimed.version);
    const byAdmin = await f.coordinator.claimEffect(ADMIN, task.id, 'k', { version: task.version });
    expect(byAdmin.outcome).toBe('claimed');
    await f.coordinator.completeTask(agent.caller, task.id, { version: task.version });
    await expect(
      f.coordinator.claimEffect(agent.caller, task.id, 'k2', { version: task.version }),
    ).rejects.toMatchObject({ code: 'stale_version' });
  });

  it('expired keys are deleted by the sweep, on demand and on its timer', async () => {
    f = await createFixture({ effectSweepIntervalMs: 60_000 });
    const agent = await f.register();
    // A long lease: the task stays running while the clock moves.
    const task = await f.running(agent, { timing: { heartbeatIntervalMs: 600_000 } });
    const ran = async (key: string, ttlMs: number) => {
      const c = await f.coordinator.claimEffect(agent.caller, task.id, key, { version: task.version });
      if (c.outcome !== 'claimed') throw new Error(`not claimed: ${c.outcome}`);
      await f.coordinator.recordEffect(agent.caller, task.id, key, {
        claimId: c.claimId,
        result: key,
        ttlMs,
      });
    };
    await ran('short', 60_000);
    await ran('long', 3_600_000);
    expect(await f.coordinator.sweepEffectsNow()).toBe(0);
    await f.advance(60_000); // the timer's sweep deletes 'short'
    expect(await f.coordinator.sweepEffectsNow()).toBe(0);
    expect(
      await f.coordinator.claimEffect(agent.caller, task.id, 'long', { version: task.version }),
    ).toMatchObject({
      outcome: 'done',
      result: 'long',
    });
    expect(
      (await f.coordinator.claimEffect(agent.caller, task.id, 'short', { version: task.version })).outcome,
    ).toBe('claimed');
  });
});
