/**
 * Alert wire types (docs/protocol.md "The watchdog", docs/design.md "Alerts"): what the watchdog tells
 * people, grouped by agent type and condition so that forty agents stalling on one outage make one
 * alert, and the notifications sent for it through the policy file's channels.
 */
import type { AlertState } from './vocabulary.js';
import { CONDITION_KINDS } from './watchdog.js';

/** Severities, lowest first: an alert still firing after `escalate_after` moves one step up. */
export const ALERT_SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export type AlertSeverity = (typeof ALERT_SEVERITIES)[number];

/**
 * What an alert is about: a condition the detectors saw, the recovery ladder running out
 * (`recovery_failed`), or a supervisor giving up on a process after its restart budget (`fatal`).
 */
export const ALERT_CONDITIONS = [...CONDITION_KINDS, 'recovery_failed', 'fatal'] as const;
export type AlertCondition = (typeof ALERT_CONDITIONS)[number];

/**
 * Why a notification was sent: the group's first (after `group_wait`), new members or a higher
 * severity (at most every `group_interval`), a reminder of an unchanged group (`repeat_interval`), an
 * escalation (`escalate_after`), or the group clearing.
 */
export const ALERT_NOTIFICATION_KINDS = ['firing', 'changed', 'repeat', 'escalated', 'resolved'] as const;
export type AlertNotificationKind = (typeof ALERT_NOTIFICATION_KINDS)[number];

/** One delivery attempt of a notification to one channel. */
export interface AlertNotification {
  /** The channel's name in the policy file. */
  channel: string;
  /** When the attempt ended. */
  at: number;
  ok: boolean;
  /** Why it failed (HTTP status, timeout, refused connection …), or null. */
  error: string | null;
  kind: AlertNotificationKind;
  /** 1 for the first try of this notification on this channel, then 2, 3 … (retried with backoff). */
  attempt: number;
}

export interface Alert {
  id: string;
  group: { agentType: string; condition: AlertCondition };
  /** The highest severity raised into it, raised further by escalation. */
  severity: AlertSeverity;
  state: AlertState;
  /** While firing, the agents still in the condition; once resolved, every agent that was. */
  agentIds: string[];
  /** What the last raise said. */
  summary: string;
  /** The channels it is notified through (every raise's, by name). */
  channels: string[];
  /** When it opened, and when it last changed (an agent joined or left, a raise, an escalation). */
  firstAt: number;
  lastAt: number;
  /** When it was last notified, or null. */
  notifiedAt: number | null;
  resolvedAt: number | null;
  /** Delivery attempts, oldest first (the latest 100). */
  notifications: AlertNotification[];
}

/** `GET /v1/alerts`: newest first. */
export interface AlertsResponse {
  alerts: Alert[];
  /** Pass as `cursor` for the next page; null on the last. */
  nextCursor: string | null;
}
