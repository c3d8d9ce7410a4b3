/**
 * Two ways to watch existing code with a few lines:
 *
 * - {@link monitored} runs a function under a started {@link Monitor} and always stops it — after
 *   reporting `error` with the message when the function throws, so the coordinator learns why.
 * - {@link trackIteration} is a method decorator (TypeScript 5 standard decorators; no
 *   `experimentalDecorators`) that runs each call of an async method as one `monitor.iteration()`.
 *
 * @example
 * await monitored({ url, token, agentType: 'digest' }, async (m) => {
 *   for (const [i, feed] of feeds.entries()) {
 *     await m.withDependency('rss', () => fetchFeed(feed));
 *     m.progress((i + 1) / feeds.length);
 *   }
 * });
 *
 * @example
 * class Bot {
 *   constructor(readonly monitor: Monitor) {}
 *   \@trackIteration((bot: Bot) => bot.monitor)
 *   async step(): Promise<void> { ... }
 * }
 */
import { Monitor } from './monitor.js';
import type { MonitorOptions } from './options.js';

/**
 * Start a monitor, run `fn(monitor)`, stop the monitor (the agent leaves), and return fn's value. When
 * fn throws, the monitor reports status `error` with the error's message first, then stops, and the
 * error is rethrown. A start that fails rejects without running fn.
 */
export async function monitored<T>(options: MonitorOptions, fn: (m: Monitor) => Promise<T> | T): Promise<T> {
  const m = new Monitor(options);
  await m.start();
  try {
    return await fn(m);
  } catch (err) {
    m.error(err instanceof Error ? err.message || err.name : String(err));
    throw err;
  } finally {
    await m.stop();
  }
}

/**
 * Decorate an async method so that each call is one `monitor.iteration()` (timed for
 * `metrics.iterationMs`, counted in metadata). `source` is the monitor, or a function of the instance
 * that returns it (calls run untracked while it returns nothing, e.g. before the monitor exists).
 */
export function trackIteration<This, Args extends unknown[], R>(
  source: Monitor | ((self: This) => Monitor | null | undefined),
) {
  return (
    method: (this: This, ...args: Args) => Promise<R>,
    context: ClassMethodDecoratorContext<This, (this: This, ...args: Args) => Promise<R>>,
  ): ((this: This, ...args: Args) => Promise<R>) => {
    if (context.kind !== 'method') throw new TypeError('@trackIteration decorates methods');
    return function (this: This, ...args: Args): Promise<R> {
      const m = source instanceof Monitor ? source : source(this);
      return m ? m.iteration(() => method.apply(this, args)) : method.apply(this, args);
    };
  };
}
