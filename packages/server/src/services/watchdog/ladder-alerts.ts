/**
 * The alerting as the recovery ladder uses it (docs/design.md §6.7): raise an alert for an `alert`
 * rung, a reassignment or `recovery_failed`, ask whether it was delivered, clear an agent out of a
 * condition's alert.
 */
import type { AlertCondition, JsonObject } from '@rouse/protocol';
import type { Severity } from '../../core/policies/resolved-policy.js';
import type { AlertSource, Alerts } from '../alerts/alerts.js';

/** What the ladder asks of the alerting (an `alert` rung, a reassignment, `recovery_failed`). */
export interface LadderAlerts {
  /** Raise an alert; resolves with it (its id and how many channels it goes to), or null if it could not be. */
  raise(input: LadderAlert): Promise<{ id: string; channels: number } | null>;
  /** How the alert's delivery went. */
  delivery(alertId: string): Promise<'delivered' | 'failed' | 'pending'>;
  /** The agent is out of `condition` (without one: out of everything). */
  clear(agentId: string, condition?: AlertCondition): Promise<void>;
}

export interface LadderAlert {
  agentId: string;
  agentType: string;
  /** The group's condition: the one answered, or `recovery_failed`. */
  condition: AlertCondition;
  severity: Severity;
  /** Channel names; empty = every channel the policy file defines. */
  channels: string[];
  summary: string;
  evidence: JsonObject;
  source: AlertSource;
}

/**
 * The alert service as the ladder uses it. An alert counts as delivered once any notification of it
 * got through (grouping may send it with others), as failed once every channel gave up.
 */
export function ladderAlertsOf(alerts: Alerts, maxAttempts: number): LadderAlerts {
  return {
    async raise(a) {
      const alert = await alerts.raise({
        ...a,
        ...(a.channels.length === 0 ? {} : { channels: a.channels }),
      });
      return alert === null ? null : { id: alert.id, channels: alert.channels.length };
    },
    async delivery(alertId) {
      const alert = await alerts.get(alertId);
      if (alert === null) return 'failed';
      if (alert.notifications.some((n) => n.ok)) return 'delivered';
      const gaveUp = new Set(
        alert.notifications.filter((n) => !n.ok && n.attempt >= maxAttempts).map((n) => n.channel),
      );
      return alert.channels.length > 0 && alert.channels.every((c) => gaveUp.has(c)) ? 'failed' : 'pending';
    },
    async clear(agentId, condition) {
      await alerts.clear({ agentId, ...(condition === undefined ? {} : { condition }) });
    },
  };
}
