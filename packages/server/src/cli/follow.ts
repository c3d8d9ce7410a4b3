/**
 * What `-f` commands share: run until the stream ends for good or the user stops it (Ctrl-C,
 * SIGTERM), and ride out a coordinator that restarts or is out of reach for a while.
 */
import { isRetryable } from '@rouse/sdk';
import type { CliContext } from './context.js';
import { sleep } from './sleep.js';

/** How a follow session ended: for good, or because the coordinator went away (follow again). */
export type FollowEnd = 'done' | 'lost';

/** The first wait before following again, doubled after each failed try up to the maximum. */
export const RECONNECT_FIRST_MS = 250;
export const RECONNECT_MAX_MS = 5000;

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
      await sleep(Math.min(RECONNECT_MAX_MS, RECONNECT_FIRST_MS * 2 ** (tries - 1)), stop.signal);
      if (stop.signal.aborted) return;
    }
  } finally {
    stop.abort();
    interrupt.dispose();
  }
}
