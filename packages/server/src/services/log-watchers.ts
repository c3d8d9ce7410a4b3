/**
 * Followers of a task's logs (`rouse logs -f`, SSE): woken when lines are appended or the task ends.
 */
export interface LogWatchers {
  /** Resolves on the next `notify(taskId)` or when `signal` aborts. `cancel` drops the watch. */
  watch(taskId: string, signal: AbortSignal): { done: Promise<void>; cancel(): void };
  notify(taskId: string): void;
}

export function createLogWatchers(): LogWatchers {
  const watchers = new Map<string, Set<() => void>>();
  const drop = (taskId: string, fn: () => void): void => {
    const set = watchers.get(taskId);
    set?.delete(fn);
    if (set?.size === 0) watchers.delete(taskId);
  };
  return {
    watch(taskId, signal) {
      let wake: () => void = () => {};
      const done = new Promise<void>((resolve) => {
        wake = () => {
          drop(taskId, wake);
          signal.removeEventListener('abort', wake);
          resolve();
        };
      });
      if (signal.aborted) wake();
      else {
        const set = watchers.get(taskId);
        if (set === undefined) watchers.set(taskId, new Set([wake]));
        else set.add(wake);
        signal.addEventListener('abort', wake, { once: true });
      }
      return { done, cancel: wake };
    },
    notify(taskId) {
      const set = watchers.get(taskId);
      if (set === undefined) return;
      for (const fn of [...set]) fn();
    },
  };
}
