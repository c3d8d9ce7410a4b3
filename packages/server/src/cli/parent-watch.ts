/**
 * Noticing that the process that started this one has gone. `npx rouse serve` runs the CLI under npm
 * and a shell; a SIGTERM to npm ends npm and the shell but is not passed on, and the coordinator would
 * keep running with nobody to stop it. An orphan is adopted by init (or a subreaper), so its parent pid
 * changes: that is the sign.
 */

export interface ParentWatchOptions {
  /** The current parent pid. @default () => process.ppid */
  parentPid?: () => number;
  /** How often to look. @default 500 */
  intervalMs?: number;
}

/**
 * Calls `onGone(formerParentPid)` once, when the parent pid differs from the one at the start. The timer
 * is unref'd: it never keeps the process alive. Returns the function that stops watching.
 */
export function watchParent(onGone: (formerParentPid: number) => void, options: ParentWatchOptions = {}) {
  const parentPid = options.parentPid ?? (() => process.ppid);
  const first = parentPid();
  const timer = setInterval(() => {
    if (parentPid() === first) return;
    clearInterval(timer);
    onGone(first);
  }, options.intervalMs ?? 500);
  timer.unref();
  return (): void => clearInterval(timer);
}
