/**
 * Dependencies (DESIGN.md §6): external services agents need, reported by agents in heartbeats or
 * by operators. While one is down or rate-limited, tasks that `require` it are not dispatched.
 * Kept in memory on this coordinator for now; a report without `retryAfterMs` holds for
 * `ttlMs` unless repeated, so a dead reporter cannot block a queue forever.
 */
import type { DependencyReport } from '@rouse/protocol';
import type { Clock, TimerHandle } from '../core/clock.js';
import { type DependencyView, isDependencyUnavailable } from '../core/diagnosis.js';
import type { DependencyStatus } from './coordinator.js';

export interface DependencyRegistry {
  report(name: string, report: Omit<DependencyReport, 'name'>, reportedBy: string | null): DependencyStatus;
  list(): DependencyStatus[];
  /** Current views for the diagnosis. */
  views(): Map<string, DependencyView>;
  /** Names that block dispatch now; undefined when none (the common case, kept allocation-free). */
  unavailable(): string[] | undefined;
  stop(): void;
}

interface Entry {
  state: DependencyStatus['state'];
  until: number | null;
  since: number;
  reportedBy: string | null;
  message: string | null;
  timer: TimerHandle | null;
}

export function createDependencyRegistry(deps: {
  clock: Clock;
  ttlMs: number;
  /** A dependency stopped blocking dispatch (reported up, or its `until` passed). */
  onAvailable: (name: string) => void;
}): DependencyRegistry {
  const { clock } = deps;
  const entries = new Map<string, Entry>();
  let blocking = 0;

  const view = (name: string, e: Entry, now: number): DependencyStatus => ({
    name,
    state: isDependencyUnavailable(e, now) ? e.state : 'up',
    until: e.state === 'up' ? null : e.until,
    since: isDependencyUnavailable(e, now) || e.state === 'up' ? e.since : (e.until ?? e.since),
    reportedBy: e.reportedBy,
    message: e.message,
  });

  const recount = (): void => {
    const now = clock.now();
    blocking = 0;
    for (const e of entries.values()) if (isDependencyUnavailable(e, now)) blocking++;
  };

  return {
    report(name, report, reportedBy) {
      const now = clock.now();
      const prev = entries.get(name);
      const wasBlocking = prev !== undefined && isDependencyUnavailable(prev, now);
      prev?.timer?.cancel();
      const until = report.state === 'up' ? null : now + (report.retryAfterMs ?? deps.ttlMs);
      const sameState =
        prev !== undefined && (wasBlocking ? prev.state === report.state : report.state === 'up');
      const e: Entry = {
        state: report.state,
        until,
        since: sameState ? prev.since : now,
        reportedBy,
        message: report.message ?? null,
        timer: null,
      };
      entries.set(name, e);
      if (until !== null) {
        e.timer = clock.setTimer(until - now, () => {
          e.timer = null;
          recount();
          deps.onAvailable(name);
        });
      }
      recount();
      if (wasBlocking && report.state === 'up') deps.onAvailable(name);
      return view(name, e, now);
    },
    list() {
      const now = clock.now();
      return [...entries].map(([name, e]) => view(name, e, now)).sort((a, b) => a.name.localeCompare(b.name));
    },
    views() {
      const now = clock.now();
      return new Map([...entries].map(([name, e]) => [name, view(name, e, now)]));
    },
    unavailable() {
      if (blocking === 0) return undefined;
      const now = clock.now();
      const out: string[] = [];
      for (const [name, e] of entries) if (isDependencyUnavailable(e, now)) out.push(name);
      return out.length > 0 ? out : undefined;
    },
    stop() {
      for (const e of entries.values()) e.timer?.cancel();
    },
  };
}
