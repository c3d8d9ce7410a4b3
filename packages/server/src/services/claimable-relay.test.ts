/**
 * The claimable relay: local wake-ups are also published (coalesced per event-loop turn, one publish
 * in flight), other coordinators' notices wake local long-polls, and our own notices are ignored —
 * by `origin` when the store carries it, by content when it does not.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../core/clock.js';
import type { ClaimableNotice, Store } from '../store/store.js';
import { createClaimWaiters } from './claim-waiters.js';
import { createClaimableRelay } from './claimable-relay.js';

/** A store that only carries notices; `keepOrigin: false` drops `origin` like a bare NOTIFY payload. */
function noticeBus(keepOrigin: boolean) {
  const listeners = new Set<(n: ClaimableNotice) => void>();
  const published: ClaimableNotice[] = [];
  const store = {
    async publishClaimable(n: ClaimableNotice) {
      published.push(n);
      const heard = keepOrigin ? { ...n } : { types: [...n.types] };
      setImmediate(() => {
        for (const l of listeners) l(heard);
      });
    },
    onClaimable(l: (n: ClaimableNotice) => void) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
  } as unknown as Store;
  const send = (n: ClaimableNotice) => {
    for (const l of listeners) l(n);
  };
  return { store, published, send };
}

const turn = () => new Promise((r) => setImmediate(r));

describe.each([true, false])('claimable relay (store keeps origin: %s)', (keepOrigin) => {
  it('publishes coalesced, ignores its own echo, and wakes on others’ notices', async () => {
    const clock = new ManualClock();
    const bus = noticeBus(keepOrigin);
    const local = createClaimWaiters(clock);
    const relay = createClaimableRelay({
      store: bus.store,
      waiters: local,
      origin: 'me',
      logger: pino({ level: 'silent' }),
    });
    relay.start();
    const waiting = relay.waiters.wait({ agentId: 'a', types: ['t'], max: 1, until: clock.now() + 60_000 });
    let woken = false;
    void waiting.then(() => {
      woken = true;
    });

    // Many wake-ups in one turn: one publish carrying both types.
    relay.waiters.notify('x', 1);
    relay.waiters.notify('y', 3);
    relay.waiters.notifyAt('x', clock.now() + 5000);
    await turn();
    expect(bus.published).toEqual([{ types: ['x', 'y'], origin: 'me' }]);
    await turn();
    await turn();
    expect(relay.stats.received).toBe(0); // our own echo
    expect(woken).toBe(false);

    // Another coordinator's notice for `t` wakes the local long-poll.
    bus.send(keepOrigin ? { types: ['t'], origin: 'other' } : { types: ['t'] });
    expect(await waiting).toBe('woken');
    expect(relay.stats.received).toBe(1);
    relay.stop();
    local.stop();
  });
});
