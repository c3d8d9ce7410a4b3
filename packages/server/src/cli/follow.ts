/** What `-f` commands share: run until the stream ends or the user stops it (Ctrl-C, SIGTERM). */
import type { CliContext } from './context.js';

/**
 * Run `body` with a signal that aborts on the first SIGINT/SIGTERM; an error caused by that abort is
 * the normal way out, not a failure.
 */
export async function followUntilInterrupted(
  ctx: CliContext,
  body: (signal: AbortSignal) => Promise<void>,
): Promise<void> {
  const stop = new AbortController();
  const interrupt = ctx.untilInterrupted(stop.signal);
  void interrupt.done.then(() => stop.abort());
  try {
    await body(stop.signal);
  } catch (err) {
    if (!stop.signal.aborted) throw err;
  } finally {
    stop.abort();
    interrupt.dispose();
  }
}
