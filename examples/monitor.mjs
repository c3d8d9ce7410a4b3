// A monitored loop — an agent that is not a task worker (here: it drains a simulated inbox). The
// watchdog sees it through a few calls: each pass is an `iteration()` (timed, counted), its progress
// goes into the heartbeat's metadata (point a policy's `progress_field: items_done` at it) and as
// progress, the mailbox is a dependency, and a `wake` from the watchdog makes it reconnect at a safe
// point.
//
//   node examples/monitor.mjs                   run until SIGTERM / Ctrl-C
//   node examples/monitor.mjs --iterations 5    stop after five passes (also EXAMPLE_ITERATIONS)
import { setTimeout as sleep } from 'node:timers/promises';
import { monitored } from '@rouse/sdk';
import { agentToken, logger, option, print, url } from './shared.mjs';

const iterations = Number(option('iterations', 'EXAMPLE_ITERATIONS') ?? Number.POSITIVE_INFINITY);
const pauseMs = Number(option('pause-ms', 'EXAMPLE_PAUSE_MS') ?? 500);
const total = 20; // items in the simulated inbox

/** A stand-in for a real mailbox client; reads on after message number `from`. */
function connectInbox(from) {
  let next = from;
  return {
    async fetchBatch() {
      await sleep(20);
      const batch = [];
      while (batch.length < 3 && next < total) batch.push(`message ${++next}`);
      return batch;
    },
  };
}

await monitored(
  {
    url,
    token: agentToken(),
    agentType: 'example-monitor',
    requires: ['mailbox'],
    metadata: { items_done: 0, items_total: total },
    logger,
  },
  async (m) => {
    print('registered', { agentId: m.agentId, incarnation: m.incarnation });
    m.onWake((reason) => print('woken', { reason }));
    let inbox = connectInbox(0);
    let done = 0;
    for (let pass = 1; pass <= iterations && !m.signal.aborted; pass++) {
      await m.iteration(async () => {
        const batch = await m.withDependency('mailbox', () => inbox.fetchBatch());
        done += batch.length;
        m.metadata({ items_done: done });
        m.progress(done / total, batch.length > 0 ? `read ${done}/${total}` : 'inbox empty');
      });
      print('iteration', { pass, done });
      // a safe point: the state is consistent here, so a wake can be acted on
      if (await m.safePoint()) {
        inbox = connectInbox(done);
        print('reconnected inbox');
      }
      if (pass < iterations) await sleep(pauseMs, undefined, { signal: m.signal }).catch(() => {});
    }
  },
);
print('stopped');
// monitored() stopped the monitor (the agent left) — on SIGTERM too: the signal aborts m.signal.
