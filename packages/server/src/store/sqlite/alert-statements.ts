/** The SQLite alert statements (see `alert-store.ts`), prepared once per connection. JSON columns are text. */
import {
  ALERT_COLUMNS,
  ALERT_NOTIFICATION_COLUMNS,
  NOTIFICATIONS_PER_ALERT,
  severityRankSql,
} from '../alert-row.js';

/** `list` (a JSON array of text) with `value` added at the end unless it is in it already. */
const withMember = (list: string, value: string): string =>
  `CASE WHEN EXISTS (SELECT 1 FROM json_each(${list}) WHERE value = ${value}) THEN ${list}
        ELSE json_insert(${list}, '$[#]', ${value}) END`;

export const ALERT_SQL = {
  /**
   * Join the group's firing alert or open it. Params: @id, @agentType, @condition, @agentId,
   * @agentIds (JSON ["agentId"]), @severity, @channels (JSON array, sorted), @summary, @source,
   * @evidence (JSON text), @now.
   */
  raiseAlert: `
    INSERT INTO alerts (id, agent_type, condition, severity, state, agent_ids, all_agent_ids, summary, channels,
                        source, evidence, first_at, last_at)
    VALUES (@id, @agentType, @condition, @severity, 'firing', @agentIds, @agentIds, @summary, @channels, @source,
            @evidence, @now, @now)
    ON CONFLICT (agent_type, condition) WHERE state = 'firing' DO UPDATE SET
      severity = CASE WHEN ${severityRankSql('excluded.severity')} > ${severityRankSql('alerts.severity')}
                      THEN excluded.severity ELSE alerts.severity END,
      agent_ids = ${withMember('alerts.agent_ids', '@agentId')},
      all_agent_ids = ${withMember('alerts.all_agent_ids', '@agentId')},
      channels = (SELECT json_group_array(value) FROM (
                    SELECT DISTINCT value FROM (SELECT value FROM json_each(alerts.channels)
                                                UNION SELECT value FROM json_each(excluded.channels))
                    ORDER BY value)),
      summary = excluded.summary, source = excluded.source, evidence = excluded.evidence,
      last_at = excluded.last_at, version = alerts.version + 1
    RETURNING ${ALERT_COLUMNS}`,

  /** Take @agentId out of the firing alerts of @condition (null: any); an emptied one resolves. Params: @agentId, @condition, @now. */
  clearAlertMember: `
    UPDATE alerts SET
      agent_ids = (SELECT json_group_array(value) FROM json_each(alerts.agent_ids) WHERE value <> @agentId),
      state = CASE WHEN (SELECT count(*) FROM json_each(alerts.agent_ids) WHERE value <> @agentId) = 0
                   THEN 'resolved' ELSE 'firing' END,
      resolved_at = CASE WHEN (SELECT count(*) FROM json_each(alerts.agent_ids) WHERE value <> @agentId) = 0
                         THEN @now ELSE NULL END,
      last_at = @now, version = version + 1
    WHERE (@condition IS NULL OR condition = @condition) AND state = 'firing'
      AND EXISTS (SELECT 1 FROM json_each(alerts.agent_ids) WHERE value = @agentId)
    RETURNING ${ALERT_COLUMNS}`,

  /** Params: @id, @version, @severity, @now. */
  escalateAlert: `
    UPDATE alerts SET severity = @severity, escalated_at = @now, last_at = @now, version = version + 1
    WHERE id = @id AND version = @version AND state = 'firing'
    RETURNING ${ALERT_COLUMNS}`,

  /** Params: @id, @version, @resolved (1 for a resolved notification), @now. */
  markAlertNotified: `
    UPDATE alerts SET notified_at = @now, notified_agent_ids = agent_ids, notified_severity = severity,
      resolved_notified = @resolved, version = version + 1
    WHERE id = @id AND version = @version
    RETURNING ${ALERT_COLUMNS}`,

  /** Params: @alertId, @channel, @kind, @attempt, @ok (0/1), @error, @now. */
  recordAlertDelivery: `
    INSERT INTO alert_notifications (alert_id, channel, kind, attempt, ok, error, at)
    VALUES (@alertId, @channel, @kind, @attempt, @ok, @error, @now)
    RETURNING ${ALERT_NOTIFICATION_COLUMNS}`,

  /** Params: @id. */
  selectAlert: `SELECT ${ALERT_COLUMNS} FROM alerts WHERE id = @id`,

  /**
   * Newest first, before @beforeSeq, at most @limit. Filters: @states (JSON array, null = any),
   * @unsettled (1: firing, or resolved with the resolution not yet notified).
   */
  listAlerts: `
    SELECT ${ALERT_COLUMNS} FROM alerts
    WHERE seq < @beforeSeq
      AND (@states IS NULL OR state IN (SELECT value FROM json_each(@states)))
      AND (@unsettled = 0 OR state = 'firing' OR (notified_at IS NOT NULL AND resolved_notified = 0))
    ORDER BY seq DESC LIMIT @limit`,

  /** The latest notifications of the alerts @ids (JSON array), oldest first. */
  listNotifications: `
    SELECT ${ALERT_NOTIFICATION_COLUMNS} FROM (
      SELECT *, row_number() OVER (PARTITION BY alert_id ORDER BY seq DESC) AS nth FROM alert_notifications
      WHERE alert_id IN (SELECT value FROM json_each(@ids)))
    WHERE nth <= ${NOTIFICATIONS_PER_ALERT}
    ORDER BY seq`,
} as const;
