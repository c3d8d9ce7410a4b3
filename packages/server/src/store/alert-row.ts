/** The `alerts` and `alert_notifications` rows, the same columns in both backends, and their mapping. */
import type {
  Alert,
  AlertCondition,
  AlertNotification,
  AlertSeverity,
  AlertState,
  JsonObject,
} from '@rouse/protocol';
import { ALERT_SEVERITIES } from '@rouse/protocol';
import type { AlertRecord } from './alert-store.js';

export const ALERT_COLUMNS =
  'seq, id, agent_type, condition, severity, state, agent_ids, all_agent_ids, summary, channels, source, ' +
  'evidence, first_at, last_at, notified_at, notified_agent_ids, notified_severity, escalated_at, resolved_at, ' +
  'resolved_notified, version';

export const ALERT_NOTIFICATION_COLUMNS = 'seq, alert_id, channel, kind, attempt, ok, error, at';

/** How many delivery attempts an alert carries (its latest). */
export const NOTIFICATIONS_PER_ALERT = 100;

/** A severity's rank (low 0 … critical 3) in SQL, for `MAX` over severities in one statement. */
export function severityRankSql(expr: string): string {
  return `(CASE ${expr} ${ALERT_SEVERITIES.map((s, i) => `WHEN '${s}' THEN ${i}`).join(' ')} END)`;
}

/** A row with its JSON columns parsed. */
export interface AlertRow {
  seq: number;
  id: string;
  agent_type: string;
  condition: AlertCondition;
  severity: AlertSeverity;
  state: AlertState;
  agent_ids: string[];
  all_agent_ids: string[];
  summary: string;
  channels: string[];
  source: string;
  evidence: JsonObject;
  first_at: number;
  last_at: number;
  notified_at: number | null;
  notified_agent_ids: string[];
  notified_severity: AlertSeverity | null;
  escalated_at: number | null;
  resolved_at: number | null;
  resolved_notified: boolean | number;
  version: number;
}

export interface AlertNotificationRow {
  seq: number;
  alert_id: string;
  channel: string;
  kind: AlertNotification['kind'];
  attempt: number;
  ok: boolean | number;
  error: string | null;
  at: number;
}

const num = (v: number | null): number | null => (v === null ? null : Number(v));

export function toNotification(r: AlertNotificationRow): AlertNotification {
  return {
    channel: r.channel,
    at: Number(r.at),
    ok: Boolean(r.ok),
    error: r.error,
    kind: r.kind,
    attempt: Number(r.attempt),
  };
}

export function toAlertRecord(r: AlertRow, notifications: AlertNotification[]): AlertRecord {
  return {
    id: r.id,
    group: { agentType: r.agent_type, condition: r.condition },
    severity: r.severity,
    state: r.state,
    agentIds: r.state === 'firing' ? r.agent_ids : r.all_agent_ids,
    summary: r.summary,
    channels: r.channels,
    firstAt: Number(r.first_at),
    lastAt: Number(r.last_at),
    notifiedAt: num(r.notified_at),
    resolvedAt: num(r.resolved_at),
    notifications,
    members: r.agent_ids,
    notifiedAgentIds: r.notified_agent_ids,
    notifiedSeverity: r.notified_severity,
    escalatedAt: num(r.escalated_at),
    resolvedNotified: Boolean(r.resolved_notified),
    source: r.source,
    evidence: r.evidence,
    version: Number(r.version),
  };
}

/** The wire alert (what the routes and the event stream carry). */
export function toAlert(r: AlertRecord): Alert {
  return {
    id: r.id,
    group: r.group,
    severity: r.severity,
    state: r.state,
    agentIds: r.agentIds,
    summary: r.summary,
    channels: r.channels,
    firstAt: r.firstAt,
    lastAt: r.lastAt,
    notifiedAt: r.notifiedAt,
    resolvedAt: r.resolvedAt,
    notifications: r.notifications,
  };
}

/** Group notification rows (oldest first) by alert id. */
export function notificationsByAlert(rows: AlertNotificationRow[]): Map<string, AlertNotification[]> {
  const out = new Map<string, AlertNotification[]>();
  for (const r of rows) {
    const list = out.get(r.alert_id) ?? [];
    if (list.length === 0) out.set(r.alert_id, list);
    list.push(toNotification(r));
  }
  return out;
}
