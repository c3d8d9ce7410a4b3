/** Interventions in the coordinator (manual clock, real SQLite): every state change is an `intervention` event. */
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../store/store.js';
import { ADMIN, type CoordinatorFixture, createFixture } from '../test-support/coordinator-fixture.js';
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
    // The store counts the reads by command id in flight; each stays pending a turn, as a pooled
    // query would, so that reads started together overlap.
    let inFlight = 0;
    let most = 0;
    const counting = (store: Store): Store =>
      new Proxy(store, {
        get(target, prop, receiver) {
          const v: unknown = Reflect.get(target, prop, receiver);
          if (prop !== 'listInterventions') return v;
          return async (...args: unknown[]) => {
            most = Math.max(most, ++inFlight);
            try {
              await new Promise((r) => setImmediate(r));
              return await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            } finally {
              inFlight--;
            }
          };
        },
      });
    f = await createFixture({}, counting);
    const agent = await f.register();
    const sent = await f.coordinator.sendCommand(ADMIN, agent.agentId, { type: 'wake' });
    most = 0;
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
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(BACKGROUND_STORE_CALLS);
  });
});
