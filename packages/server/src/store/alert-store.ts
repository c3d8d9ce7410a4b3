/**
 * The alerts part of the Store contract (docs/design.md "Alerts"): one alert per (agent type,
 * condition) group while it fires, the agents in it, when it was notified, and every delivery attempt
 * of its notifications. Several coordinators may share the store, so every change is one conditional
 * write: raising into a group joins its firing alert or opens it (never two firing alerts for one
 * group); escalating and marking a notification compare the alert's `version`, so of two coordinators
 * deciding to notify the same alert at once only one wins (and only the winner delivers). Part of
 * `Store` (`store.ts`).
 */
import type {
  Alert,
  AlertCondition,
  AlertNotification,
  AlertSeverity,
  AlertState,
  JsonObject,
} from '@rouse/protocol';

/** An alert with what the grouping rules (`core/alerts/alert-rules.ts`) and the conditional writes need. */
export interface AlertRecord extends Alert {
  /** The agents in it now (`agentIds` lists every agent that was, once it resolved). */
  members: string[];
  /** Its members and severity as of its last notification. */
  notifiedAgentIds: string[];
  notifiedSeverity: AlertSeverity | null;
  escalatedAt: number | null;
  /** Its resolution was notified. */
  resolvedNotified: boolean;
  /** What the last raise was (`ladder`, `reassign`, `supervisor` …) and its evidence. */
  source: string;
  evidence: JsonObject;
  /** Grows with every write: escalation and notification compare it. */
  version: number;
}

export interface RaiseAlertInput {
  /** The id a new alert gets (ignored when the group already fires). */
  id: string;
  agentType: string;
  condition: AlertCondition;
  agentId: string;
  /** The alert's severity becomes the higher of its own and this. */
  severity: AlertSeverity;
  /** Added to its channels (names, sorted, no repeats). */
  channels: string[];
  summary: string;
  source: string;
  evidence: JsonObject;
}

export interface AlertQuery {
  states?: AlertState[];
  /** Only those the grouping rules still look at: firing, or resolved with the resolution not yet notified. */
  unsettled?: boolean;
  limit?: number;
  /** From a previous page's `nextCursor`. */
  cursor?: string;
}

export interface AlertStore {
  /**
   * Put `agentId` into the firing alert of its group (agent type, condition), opening one when none
   * fires — one conditional write. Raises its severity to the higher one, adds the channels, takes the
   * summary, source and evidence, and moves `lastAt`.
   */
  raiseAlert(input: RaiseAlertInput): Promise<AlertRecord>;
  /**
   * `agentId` is no longer in `condition` (no condition: in any — it left): take it out of the firing
   * alerts it is in; an alert left empty resolves. The alerts changed (none when it was in none).
   */
  clearAlertMember(input: { agentId: string; condition?: AlertCondition }): Promise<AlertRecord[]>;
  /** Move a firing alert to `severity`, if its version is still `version`; else null. */
  escalateAlert(input: { id: string; version: number; severity: AlertSeverity }): Promise<AlertRecord | null>;
  /**
   * Record that the alert is being notified (`kind`), if its version is still `version`: its members and
   * severity as of now become the notified ones (a `resolved` notification settles it). Null when it
   * changed meanwhile or another coordinator got there first — then nothing may be sent.
   */
  markAlertNotified(input: {
    id: string;
    version: number;
    kind: AlertNotification['kind'];
  }): Promise<AlertRecord | null>;
  /** Record one delivery attempt (at the store's now). */
  recordAlertDelivery(input: {
    alertId: string;
    channel: string;
    kind: AlertNotification['kind'];
    attempt: number;
    ok: boolean;
    error: string | null;
  }): Promise<AlertNotification>;
  getAlert(id: string): Promise<AlertRecord | null>;
  /** Newest first, filtered, a page at a time (`nextCursor` null on the last page). */
  listAlerts(query?: AlertQuery): Promise<{ alerts: AlertRecord[]; nextCursor: string | null }>;
}
