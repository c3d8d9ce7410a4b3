/**
 * V8 flags this process sets while it runs, and puts back after starting a thread.
 *
 * V8's flags are process-wide, and creating an isolate (a worker thread's) resets some of them: it
 * raises `--semi-space-growth-factor` to at least 2, which undoes the lean heap's cap on the main
 * thread's young generation (cli/heap-tuning.ts). So flags go through {@link setV8Flag}, and code
 * that starts a worker thread calls {@link reapplyV8Flags} once the thread is up, before the main
 * thread allocates again.
 */
import { setFlagsFromString } from 'node:v8';

/** The last value set for each flag, as its command-line form. */
const applied = new Map<string, string>();

/** Set `--name=value` for the whole process, and remember it. */
export function setV8Flag(name: string, value: number): void {
  const flag = `--${name}=${value}`;
  setFlagsFromString(flag);
  applied.set(name, flag);
}

/** Set again every flag set through {@link setV8Flag} (after a new isolate may have reset them). */
export function reapplyV8Flags(): void {
  for (const flag of applied.values()) setFlagsFromString(flag);
}
