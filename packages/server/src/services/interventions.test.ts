/** Interventions in the coordinator (manual clock, real SQLite): every state change is an `intervention` event. */
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN, type CoordinatorFixture, createFixture } from '../test-support/coordinator-fixture.js';
import { storeCallCounter } from '../test-support/store-call-counter.js';
import { BACKGROUND_STORE_CALLS } from './limited.js';

let f: CoordinatorFixture;
afterEach(async () => {
  await f.close();
});

describe('interventions in the coordinator', () => {
  it('a manual wake opens one, its acknowledgement ends it: both published on the event stream', async () => {
    f = await createFixture();
    const agent = await f.register();
    const sent = await f.coordinator.sendCommand(ADMIN, agent.agentId, { type: 'wake' });
    await f.advance(10);
    await f.coordinator.agentHeartbeat(agent.caller, agent.agentId, {
      acks: [{ commandId: sent.commandId, outcome: 'done' }],
    });
    await f.advance(10);
    const published = f.events.flatMap((e) =>
      e.type === 'intervention' ? [`${e.intervention.id} ${e.intervention.state}`] : [],
    );
    expect(published).toEqual([`${sent.intervention?.id} pending`, `${sent.intervention?.id} succeeded`]);
    expect(await f.coordinator.getIntervention(ADMIN, sent.intervention!.id)).toMatchObject({
      state: 'succeeded',
      startedAt: f.clock.now() - 20,
      endedAt: f.clock.now() - 10,
    });
  });

  it("records a heartbeat's acknowledgements a few at a time, not one after another", async () => {
    const counter = storeCallCounter(['listInterventions']);
    f = await createFixture({}, counter.wrap);
    const agent = await f.register();
    const sent = await f.coordinator.sendCommand(ADMIN, agent.agentId, { type: 'wake' });
    counter.reset();
    // Eleven acknowledgements of commands nobody sent, and the one of the open intervention's.
    const acks = Array.from({ length: 11 }, (_, i) => ({
      commandId: `cmd_unknown_${i}`,
      outcome: 'done' as const,
    }));
    await f.coordinator.agentHeartbeat(agent.caller, agent.agentId, {
      acks: [...acks, { commandId: sent.commandId, outcome: 'done' }],
    });
    expect(await f.coordinator.getIntervention(ADMIN, sent.intervention!.id)).toMatchObject({
      state: 'succeeded',
    });
    expect(counter.most).toBeGreaterThan(1);
    expect(counter.most).toBeLessThanOrEqual(BACKGROUND_STORE_CALLS);
  });
});
