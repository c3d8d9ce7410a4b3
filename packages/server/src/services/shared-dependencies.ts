/**
 * Dependencies shared by every coordinator of a store: a report is applied to this coordinator's copy
 * at once (its claims stop at once), then saved; every `refreshMs` the copy takes what the others
 * saved, so a rate limit reported through one coordinator stops the claims of all of them within a
 * refresh, and a restarted coordinator remembers it.
 */
import type { DependencyReport } from '@rouse/protocol';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { Store } from '../store/store.js';
import type { DependencyStatus } from './coordinator.js';
import type { DependencyRegistry } from './dependency-registry.js';

export interface SharedDependencies {
  /** Apply the report here, then save it for the others (unless it changes nothing stored). */
  report(
    name: string,
    report: Omit<DependencyReport, 'name'>,
    reportedBy: string | null,
  ): Promise<DependencyStatus>;
  /** Take what the store has that this copy does not (one read). */
  refresh(): Promise<void>;
  /** Refresh every `refreshMs` until `stop()`; a failed refresh is logged and the next one tried. */
  start(): void;
  stop(): void;
}

export function createSharedDependencies(deps: {
  registry: DependencyRegistry;
  store: Store;
  clock: Clock;
  logger: Logger;
  refreshMs: number;
}): SharedDependencies {
  const { registry, store, clock, logger } = deps;
  let timer: TimerHandle | null = null;
  let stopped = false;

  async function refresh(): Promise<void> {
    for (const record of await store.listDependencies()) registry.apply(record);
  }

  function schedule(): void {
    if (stopped) return;
    timer = clock.setTimer(deps.refreshMs, () => {
      timer = null;
      refresh()
        .catch((err: unknown) => logger.warn({ err }, 'could not refresh dependency states'))
        .finally(schedule);
    });
  }

  return {
    async report(name, report, reportedBy) {
      const { status, record, news } = registry.report(name, report, reportedBy);
      if (news) registry.apply(await store.saveDependency(record));
      return status;
    },
    refresh,
    start() {
      stopped = false;
      if (timer === null) schedule();
    },
    stop() {
      stopped = true;
      timer?.cancel();
      timer = null;
    },
  };
}
