/**
 * Dependency reports of an agent (docs/design.md §6.6): what its calls to external services revealed,
 * carried by its next heartbeat. The coordinator holds a `down` report for a while unless it is
 * repeated, and stops dispatching tasks that `require` a dependency while it is unavailable.
 *
 * What a beat carries: every dependency observed since the previous beat, once (the latest
 * observation) — except an `up` the coordinator already has, which would say nothing new. So a
 * dependency that keeps failing is re-reported with every beat (its report stays fresh), one that
 * keeps working costs nothing, and one that is no longer called ages out on the coordinator.
 */
import type { DependencyReport, DependencyState } from '@rouse/protocol';
import { DEPENDENCY_STATES } from '@rouse/protocol';
import type { Now } from '../clock.js';
import { InvalidOptionError } from '../errors.js';
import { classifyError, classifyValue, type DependencyObservation } from './classify-dependency.js';

/** Dependency reports one heartbeat may carry (the protocol's limit). */
export const MAX_DEPENDENCIES_PER_BEAT = 32;
const NAME = /^[A-Za-z0-9_.:/-]{1,128}$/;

/** Options of a dependency report made by hand. */
export interface DependencyReportOptions {
  /** With `rate_limited`: how long the service asked to wait. */
  retryAfterMs?: number;
  /** Why, for the operator (at most 1024 characters). */
  message?: string;
}

interface Entry {
  state: DependencyState;
  /** With rate_limited: when the wait ends (retryAfterMs is sent relative to the beat). */
  retryUntil: number | undefined;
  message: string | undefined;
  /** Bumped on every observation (a failed beat puts back only what was not observed again). */
  seq: number;
  pending: boolean;
  /** The state the coordinator last accepted from us. */
  sent: DependencyState | undefined;
}

/** Reports taken for one beat, to confirm or put back. */
export interface TakenReports {
  reports: DependencyReport[];
  seqs: number[];
}

export class DependencyTracker {
  private readonly entries = new Map<string, Entry>();
  private readonly now: Now;

  constructor(now: Now) {
    this.now = now;
  }

  /** Record an observation; throws {@link InvalidOptionError} for a bad name, state or option. */
  observe(name: string, state: DependencyState, options: DependencyReportOptions = {}): void {
    checkName(name);
    if (!DEPENDENCY_STATES.includes(state)) {
      throw new InvalidOptionError(
        'dependency state',
        `must be one of ${DEPENDENCY_STATES.join(', ')}`,
        state,
      );
    }
    const { retryAfterMs, message } = options;
    if (retryAfterMs !== undefined && (!Number.isFinite(retryAfterMs) || retryAfterMs < 0)) {
      throw new InvalidOptionError('retryAfterMs', 'must be a number of milliseconds >= 0', retryAfterMs);
    }
    const prev = this.entries.get(name);
    const entry: Entry = {
      state,
      retryUntil:
        state === 'rate_limited' && retryAfterMs !== undefined ? this.now() + retryAfterMs : undefined,
      message: message === undefined ? undefined : String(message).slice(0, 1024),
      seq: (prev?.seq ?? 0) + 1,
      // an `up` the coordinator already has says nothing new (a `down` still unsent is thereby void)
      pending: !(state === 'up' && prev?.sent === 'up'),
      sent: prev?.sent,
    };
    this.entries.set(name, entry);
  }

  /** Record what a call's outcome says (see classify-dependency.ts). */
  observeOutcome(name: string, outcome: { error: unknown } | { value: unknown }): void {
    const o: DependencyObservation | undefined =
      'error' in outcome
        ? classifyError(outcome.error, this.now())
        : classifyValue(outcome.value, this.now());
    if (o !== undefined) this.observe(name, o.state, o);
  }

  /** The latest state of every dependency observed, by name. */
  states(): Record<string, DependencyState> {
    const out: Record<string, DependencyState> = {};
    for (const [name, e] of this.entries) out[name] = e.state;
    return out;
  }

  /** True when a report waits for the next beat. */
  get pending(): boolean {
    for (const e of this.entries.values()) if (e.pending) return true;
    return false;
  }

  /** The reports for the next beat (at most {@link MAX_DEPENDENCIES_PER_BEAT}; the rest wait). */
  take(): TakenReports {
    const reports: DependencyReport[] = [];
    const seqs: number[] = [];
    const now = this.now();
    for (const [name, e] of this.entries) {
      if (!e.pending) continue;
      if (reports.length >= MAX_DEPENDENCIES_PER_BEAT) break;
      const r: DependencyReport = { name, state: e.state };
      if (e.retryUntil !== undefined) r.retryAfterMs = Math.max(0, Math.round(e.retryUntil - now));
      if (e.message !== undefined) r.message = e.message;
      reports.push(r);
      seqs.push(e.seq);
      e.pending = false;
    }
    return { reports, seqs };
  }

  /** The beat carrying `taken` was answered: remember what the coordinator now knows. */
  delivered(taken: TakenReports): void {
    taken.reports.forEach((r, i) => {
      const e = this.entries.get(r.name);
      if (!e) return;
      e.sent = r.state;
      // observed again while the beat was on its way: that observation was weighed against an older `sent`
      if (e.seq !== taken.seqs[i]) e.pending = !(e.state === 'up' && e.sent === 'up');
    });
  }

  /** The beat failed: report again what was not observed anew meanwhile. */
  undelivered(taken: TakenReports): void {
    taken.reports.forEach((r, i) => {
      const e = this.entries.get(r.name);
      if (e && e.seq === taken.seqs[i]) e.pending = true;
    });
  }
}

/**
 * Run `fn`, record what its outcome says about dependency `name` (`tracker.observeOutcome`), and return
 * its value or rethrow its error unchanged.
 */
export async function runWithDependency<T>(
  tracker: DependencyTracker,
  name: string,
  fn: () => Promise<T> | T,
): Promise<T> {
  checkName(name);
  let value: T;
  try {
    value = await fn();
  } catch (error) {
    tracker.observeOutcome(name, { error });
    throw error;
  }
  tracker.observeOutcome(name, { value });
  return value;
}

function checkName(name: string): void {
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new InvalidOptionError(
      'dependency name',
      'must be 1-128 characters of letters, digits, _ . : / -',
      name,
    );
  }
}
