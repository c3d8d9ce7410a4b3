/**
 * The claimable relay: local wake-ups are also published (coalesced per event-loop turn, one publish
 * in flight), other coordinators' notices wake local long-polls, and our own notices are ignored —
 * by `origin` when the store carries it, by content when it does not. Alone, it publishes nothing, and
 * once settled after its start it wakes its own long-polls to look at the store again.
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

/** A started relay as coordinator `me` over a notice bus. */
function relayOf(opts: { keepOrigin?: boolean; othersLive?: () => boolean; settleMs?: number } = {}) {
  const clock = new ManualClock();
  const bus = noticeBus(opts.keepOrigin ?? true);
  const local = createClaimWaiters(clock);
  const relay = createClaimableRelay({
    store: bus.store,
    waiters: local,
    origin: 'me',
    logger: pino({ level: 'silent' }),
    clock,
    ...(opts.othersLive === undefined ? {} : { othersLive: opts.othersLive }),
    ...(opts.settleMs === undefined ? {} : { settleMs: opts.settleMs }),
  });
  relay.start();
  const stop = () => {
    relay.stop();
    local.stop();
  };
  return { clock, bus, relay, stop };
}

describe.each([true, false])('claimable relay (store keeps origin: %s)', (keepOrigin) => {
  it('publishes coalesced, ignores its own echo, and wakes on others’ notices', async () => {
    const { clock, bus, relay, stop } = relayOf({ keepOrigin });
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
    stop();
  });
});

describe('claimable relay alone', () => {
  it('publishes nothing while no other coordinator is live, and starts again when one is', async () => {
    let others = false;
    const { clock, bus, relay, stop } = relayOf({ othersLive: () => others });
    const waiting = relay.waiters.wait({ agentId: 'a', types: ['x'], max: 1, until: clock.now() + 60_000 });
    relay.waiters.notify('x', 1);
    relay.waiters.notifyAt('y', clock.now() + 5000);
    await turn();
    expect(bus.published).toEqual([]);
    expect(relay.stats.published).toBe(0);
    expect(await waiting).toBe('woken'); // the local long-poll still hears it
    others = true;
    relay.waiters.notify('x', 1);
    await turn();
    expect(bus.published).toEqual([{ types: ['x'], origin: 'me' }]);
    stop();
  });

  it('wakes its long-polls once, settleMs after its start, so they see what others created meanwhile', async () => {
    const { clock, relay, stop } = relayOf({ othersLive: () => false, settleMs: 3000 });
    let result: string | undefined;
    void relay.waiters.wait({ agentId: 'a', types: ['t'], max: 1, until: clock.now() + 60_000 }).then((r) => {
      result = r;
    });
    clock.advance(2999);
    await turn();
    expect(result).toBeUndefined();
    clock.advance(1);
    await turn();
    expect(result).toBe('woken');
    // Once only: a later wait sleeps on.
    let later: string | undefined;
    void relay.waiters.wait({ agentId: 'b', types: ['t'], max: 1, until: clock.now() + 60_000 }).then((r) => {
      later = r;
    });
    clock.advance(10_000);
    await turn();
    expect(later).toBeUndefined();
    stop();
  });

  it('says it started, and publishes again for a while when it hears another coordinator start', async () => {
    const { clock, bus, relay, stop } = relayOf({ othersLive: () => false, settleMs: 3000 });
    expect(bus.published).toEqual([{ types: [], origin: 'me' }]); // its own start, heard back and ignored
    await turn();
    relay.waiters.notify('x', 1);
    await turn();
    expect(bus.published).toHaveLength(1);
    // Another coordinator starts: publish again until its presence would show at a renewal.
    bus.send({ types: [], origin: 'other' });
    expect(relay.stats.received).toBe(0);
    relay.waiters.notify('x', 1);
    await turn();
    expect(bus.published.slice(1)).toEqual([{ types: ['x'], origin: 'me' }]);
    clock.advance(3000);
    relay.waiters.notify('x', 1);
    await turn();
    expect(bus.published).toHaveLength(2);
    stop();
  });
});
