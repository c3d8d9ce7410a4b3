/**
 * Dependencies (docs/design.md §6): external services agents need, reported by agents in heartbeats or
 * by operators. While one is down or rate-limited, tasks that `require` it are not dispatched. A
 * report without `retryAfterMs` holds for `ttlMs` unless repeated, so a dead reporter cannot block a
 * queue forever.
 *
 * This is one coordinator's copy, read synchronously on every claim. The store holds the shared state
 * (`shared-dependencies.ts` saves each report and refreshes the copy): `apply` takes a stored record
 * when it is newer than the copy's (by `version`).
 */
import type { DependencyReport } from '@rouse/protocol';
import type { Clock, TimerHandle } from '../core/clock.js';
import { type DependencyView, isDependencyUnavailable } from '../core/diagnosis.js';
import type { DependencyRecord } from '../store/store.js';
import type { DependencyStatus } from './coordinator.js';

export interface DependencyRegistry {
  /**
   * Record a report in this copy. Returns what it now shows, the record to save (the store gives it
   * its version), and whether that record says anything the stored one did not (a repeated `up` does
   * not: saving it would only cost a write per heartbeat).
   */
  report(
    name: string,
    report: Omit<DependencyReport, 'name'>,
    reportedBy: string | null,
  ): { status: DependencyStatus; record: Omit<DependencyRecord, 'version'>; news: boolean };
  /** Take a stored record when it is newer than this copy's; true when it was taken. */
  apply(record: DependencyRecord): boolean;
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
  /** The stored version this entry is, or was reported over (0: never stored). */
  version: number;
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

  /** Put `e` in place of `name`'s entry, with a timer for when it stops blocking. */
  const install = (name: string, e: Entry, now: number): void => {
    const prev = entries.get(name);
    const wasBlocking = prev !== undefined && isDependencyUnavailable(prev, now);
    prev?.timer?.cancel();
    entries.set(name, e);
    if (e.state !== 'up' && e.until !== null && e.until > now) {
      e.timer = clock.setTimer(e.until - now, () => {
        e.timer = null;
        recount();
        deps.onAvailable(name);
      });
    }
    recount();
    if (wasBlocking && !isDependencyUnavailable(e, now)) deps.onAvailable(name);
  };

  return {
    report(name, report, reportedBy) {
      const now = clock.now();
      const prev = entries.get(name);
      const wasBlocking = prev !== undefined && isDependencyUnavailable(prev, now);
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
        version: prev?.version ?? 0,
      };
      const news =
        prev === undefined ||
        prev.version === 0 ||
        prev.state !== e.state ||
        prev.until !== e.until ||
        prev.since !== e.since ||
        prev.message !== e.message;
      install(name, e, now);
      const { timer: _timer, version: _version, ...fields } = e;
      return { status: view(name, e, now), record: { name, ...fields }, news };
    },
    apply(record) {
      const prev = entries.get(record.name);
      if (prev !== undefined && prev.version >= record.version) return false;
      const { name, version, ...fields } = record;
      install(name, { ...fields, timer: null, version }, clock.now());
      return true;
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
