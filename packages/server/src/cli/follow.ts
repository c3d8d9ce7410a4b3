/**
 * What `-f` commands share: run until the stream ends for good or the user stops it (Ctrl-C,
 * SIGTERM), and ride out a coordinator that restarts or is out of reach for a while.
 */
import type { StreamEvent } from '@rouse/protocol';
import { backoffDelayMs, isRetryable } from '@rouse/sdk';
import type { CliContext } from './context.js';
import { sleep } from './sleep.js';

/** How a follow session ended: for good, or because the coordinator went away (follow again). */
export type FollowEnd = 'done' | 'lost';

/** The first wait before following again, doubled after each failed try up to the maximum. */
const RECONNECT = { baseDelayMs: 250, maxDelayMs: 5000 };
/** No jitter: one CLI process does not need spreading out, and the waits stay as documented. */
const NO_JITTER = () => 1;

/**
 * Run `session` with a signal that aborts on the first SIGINT/SIGTERM; an error caused by that abort
 * is the normal way out, not a failure.
 *
 * A session that loses the coordinator — it fails with a network error or a 502/503/504, or returns
 * `'lost'` (a stream the coordinator closed while the thing followed goes on) — is run again after
 * a backoff, until the coordinator is back, telling the user once on stderr when it was lost and once
 * when the session calls `connected()` again. Each session resumes from what the one before printed
 * (the caller keeps that). Any other error ends the follow, and so does any error before the first
 * `connected()`: a coordinator that was never reached is reported as such.
 */
export async function followUntilInterrupted(
  ctx: CliContext,
  session: (signal: AbortSignal, connected: () => void) => Promise<FollowEnd | undefined>,
): Promise<void> {
  const stop = new AbortController();
  const interrupt = ctx.untilInterrupted(stop.signal);
  void interrupt.done.then(() => stop.abort());
  let lost = false;
  let tries = 0;
  let reached = false;
  const connected = (): void => {
    reached = true;
    tries = 0;
    if (!lost) return;
    lost = false;
    ctx.warn('(the coordinator is back; following again)');
  };
  try {
    for (;;) {
      let reason = 'it closed the stream';
      try {
        if ((await session(stop.signal, connected)) !== 'lost') return;
      } catch (err) {
        if (stop.signal.aborted) return;
        // A coordinator not reached yet is the usual error (a wrong URL, not started): only one that
        // was there is waited for.
        if (!reached || !isRetryable(err)) throw err;
        reason = (err as Error).message.replace(/; is the coordinator reachable\?$/, '');
      }
      if (stop.signal.aborted) return;
      if (!lost) {
        lost = true;
        ctx.warn(`(lost the coordinator: ${reason}; following again once it is back, Ctrl-C to stop)`);
      }
      tries++;
      await sleep(backoffDelayMs(tries, RECONNECT, NO_JITTER), stop.signal);
      if (stop.signal.aborted) return;
    }
  } finally {
    stop.abort();
    interrupt.dispose();
  }
}

/** What a followed list (`alerts -f`, `interventions -f`) is made of. */
export interface FollowedList<T> {
  /** What is followed, for the line that says so (`alerts`). */
  what: string;
  /** Connect to the event stream; resolves once connected. */
  open(signal: AbortSignal): Promise<AsyncIterable<StreamEvent>>;
  list(): Promise<T[]>;
  /** The item an event changed, when it is one of those followed. */
  changed(event: StreamEvent): T | undefined;
  /** One state of an item: a change is printed once per key. */
  key(item: T): string;
  printList(shown: T[]): void;
  printChange(item: T): void;
}

/**
 * Print the list, then every change as it happens, until Ctrl-C, across coordinator restarts. Each
 * state is printed once: not a change the list already shows (made between connecting and reading
 * it), nor, after a reconnection, one printed before the coordinator went; what changed while it was
 * away is printed when it is back.
 */
export async function followList<T>(ctx: CliContext, f: FollowedList<T>): Promise<void> {
  const printed = new Set<string>();
  const print = (item: T): void => {
    printed.add(f.key(item));
    f.printChange(item);
  };
  let first = true;
  await followUntilInterrupted(ctx, async (signal, connected) => {
    // Connected before the list is read, so no change falls between the two.
    const events = await f.open(signal);
    const shown = await f.list();
    connected();
    if (first) {
      first = false;
      f.printList(shown);
      for (const item of shown) printed.add(f.key(item));
      ctx.warn(`(following ${f.what}; Ctrl-C to stop)`);
    } else {
      for (const item of [...shown].reverse()) if (!printed.has(f.key(item))) print(item);
    }
    for await (const event of events) {
      const item = f.changed(event);
      if (item !== undefined && !printed.has(f.key(item))) print(item);
    }
    return 'lost'; // the event stream ends only when the coordinator goes
  });
}
