/** Wrap a subcommand's async body so its returned exit code lands in the context. */
import type { CliContext } from './context.js';

// biome-ignore lint/suspicious/noExplicitAny: commander passes positional args and options untyped
export function action<A extends any[]>(ctx: CliContext, fn: (...args: A) => Promise<number | undefined>) {
  return async (...args: A): Promise<void> => {
    const code = await fn(...args);
    if (typeof code === 'number') ctx.exitCode = code;
  };
}
