/**
 * When an alert group is notified (docs/design.md "Alerts"), as a pure function of the group, the
 * policy file's alert timing and the time. Alerts are grouped by (agent type, condition): one alert
 * per group while it fires, however many agents are in it.
 *
 * - The first notification goes out `group_wait` after the group opened (agents that join meanwhile
 *   ride along).
 * - After that, agents joining (or a raise at a higher severity) are notified at most every
 *   `group_interval`; an unchanged group is repeated every `repeat_interval`.
 * - A group still firing `escalate_after` after it opened (or after its last escalation) moves one
 *   severity up (low → medium → high → critical) and is notified at once.
 * - Inhibition: a group whose condition a dependency outage explains (`INHIBITED_BY_DEPENDENCY`) is not
 *   notified — nor escalated — while every one of its agents is in a firing `dependency_down` group.
 * - A group that empties resolves; it is notified resolved once, if it was ever notified at all.
 */
import { ALERT_SEVERITIES, type AlertCondition, type AlertSeverity } from '@rouse/protocol';
import type { AlertTiming } from '../policies/alert-settings.js';

/** Conditions a dependency outage explains: their alerts are inhibited by a covering `dependency_down` group. */
export const INHIBITED_BY_DEPENDENCY: readonly AlertCondition[] = ['progress_stalled', 'error_persisting'];

/** What the rules read of a group (the store's alert record has these and more). */
export interface AlertGroupState {
  condition: AlertCondition;
  state: 'firing' | 'resolved';
  severity: AlertSeverity;
  /** The agents in it now (empty once resolved). */
  agentIds: readonly string[];
  firstAt: number;
  /** When it was last notified, or null (never). */
  notifiedAt: number | null;
  /** Its agents and severity as of that notification. */
  notifiedAgentIds: readonly string[];
  notifiedSeverity: AlertSeverity | null;
  /** When it last escalated, or null. */
  escalatedAt: number | null;
  /** Its resolution was notified. */
  resolvedNotified: boolean;
}

export type AlertStep =
  /** Nothing to do now; look again at `at` (null: only when the group changes). */
  | { do: 'wait'; at: number | null }
  /** Not notified: a firing `dependency_down` group covers every agent of it. */
  | { do: 'inhibited' }
  /** Move it up to `severity` (then it is notified `escalated`). */
  | { do: 'escalate'; severity: AlertSeverity }
  | { do: 'notify'; kind: 'firing' | 'changed' | 'repeat' | 'escalated' | 'resolved' }
  /** Nothing more will ever be sent for it. */
  | { do: 'settled' };

/** The next severity up, or null at `critical`. */
export function nextSeverity(s: AlertSeverity): AlertSeverity | null {
  return ALERT_SEVERITIES[ALERT_SEVERITIES.indexOf(s) + 1] ?? null;
}

/** The higher of two severities. */
export function maxSeverity(a: AlertSeverity, b: AlertSeverity): AlertSeverity {
  return ALERT_SEVERITIES.indexOf(a) >= ALERT_SEVERITIES.indexOf(b) ? a : b;
}

/**
 * Is the group inhibited: its condition is one a dependency outage explains, and every agent of it is
 * in a firing `dependency_down` group (`downAgents`: the agents of all of them).
 */
export function isInhibited(
  group: Pick<AlertGroupState, 'condition' | 'state' | 'agentIds'>,
  downAgents: ReadonlySet<string>,
): boolean {
  if (group.state !== 'firing' || !INHIBITED_BY_DEPENDENCY.includes(group.condition)) return false;
  return group.agentIds.length > 0 && group.agentIds.every((a) => downAgents.has(a));
}

/** What to do about `group` at `now`. */
export function nextAlertStep(
  group: AlertGroupState,
  timing: AlertTiming,
  now: number,
  inhibited: boolean,
): AlertStep {
  if (group.state === 'resolved') {
    if (group.notifiedAt === null || group.resolvedNotified) return { do: 'settled' };
    return { do: 'notify', kind: 'resolved' };
  }
  if (group.agentIds.length === 0) return { do: 'wait', at: null };
  if (inhibited) return { do: 'inhibited' };
  if (group.notifiedAt === null) {
    const due = group.firstAt + timing.groupWaitMs;
    return now >= due ? { do: 'notify', kind: 'firing' } : { do: 'wait', at: due };
  }
  let escalateAt: number | null = null;
  const up = nextSeverity(group.severity);
  if (timing.escalateAfterMs !== null && up !== null) {
    escalateAt = (group.escalatedAt ?? group.firstAt) + timing.escalateAfterMs;
    if (now >= escalateAt) return { do: 'escalate', severity: up };
  }
  if (group.escalatedAt !== null && group.escalatedAt > group.notifiedAt) {
    return { do: 'notify', kind: 'escalated' };
  }
  const notified = new Set(group.notifiedAgentIds);
  const changed =
    group.agentIds.some((a) => !notified.has(a)) ||
    (group.notifiedSeverity !== null &&
      maxSeverity(group.severity, group.notifiedSeverity) !== group.notifiedSeverity);
  const due = group.notifiedAt + (changed ? timing.groupIntervalMs : timing.repeatIntervalMs);
  if (now >= due) return { do: 'notify', kind: changed ? 'changed' : 'repeat' };
  return { do: 'wait', at: escalateAt === null ? due : Math.min(due, escalateAt) };
}
