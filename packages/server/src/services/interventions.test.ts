/** Interventions in the coordinator (manual clock, real SQLite): every state change is an `intervention` event. */
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN, type CoordinatorFixture, createFixture } from '../test-support/coordinator-fixture.js';

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
});
