/** The PostgreSQL alert statements (see `alert-store.ts`). `$1` is the store clock's now or null. */
import {
  ALERT_COLUMNS,
  ALERT_NOTIFICATION_COLUMNS,
  NOTIFICATIONS_PER_ALERT,
  severityRankSql,
} from '../alert-row.js';
import { CLOCK_CTE } from './sql-fragments.js';

/** `list` (a jsonb array of text) with `value` added at the end unless it is in it already. */
const withMember = (list: string, value: string): string =>
  `CASE WHEN ${list} ? ${value} THEN ${list} ELSE ${list} || jsonb_build_array(${value}) END`;

export const ALERT_SQL = {
  /**
   * Join the group's firing alert or open it — one statement, so of coordinators raising for the same
   * group at once, one opens it and the others join it. Params: $1 now, $2 id, $3 agent type,
   * $4 condition, $5 agent id, $6 severity, $7 channels (jsonb, sorted), $8 summary, $9 source, $10 evidence.
   */
  raiseAlert: `
    WITH ${CLOCK_CTE}
    INSERT INTO alerts AS a (id, agent_type, condition, severity, state, agent_ids, all_agent_ids, summary, channels,
                             source, evidence, first_at, last_at)
    SELECT $2, $3, $4, $6, 'firing', jsonb_build_array($5::text), jsonb_build_array($5::text), $8, $7::jsonb, $9,
           $10::jsonb, clock.now, clock.now FROM clock
    ON CONFLICT (agent_type, condition) WHERE state = 'firing' DO UPDATE SET
      severity = CASE WHEN ${severityRankSql('EXCLUDED.severity')} > ${severityRankSql('a.severity')}
                      THEN EXCLUDED.severity ELSE a.severity END,
      agent_ids = ${withMember('a.agent_ids', '$5::text')},
      all_agent_ids = ${withMember('a.all_agent_ids', '$5::text')},
      channels = (SELECT COALESCE(jsonb_agg(DISTINCT c ORDER BY c), '[]'::jsonb)
                  FROM jsonb_array_elements_text(a.channels || EXCLUDED.channels) AS c),
      summary = EXCLUDED.summary, source = EXCLUDED.source, evidence = EXCLUDED.evidence,
      last_at = EXCLUDED.last_at, version = a.version + 1
    RETURNING ${ALERT_COLUMNS}`,

  /** Take $2 (agent id) out of the firing alerts of $3 (condition, null: any); an emptied one resolves. Params: $1 now. */
  clearAlertMember: `
    WITH ${CLOCK_CTE}
    UPDATE alerts SET
      agent_ids = agent_ids - $2::text,
      state = CASE WHEN jsonb_array_length(agent_ids - $2::text) = 0 THEN 'resolved' ELSE 'firing' END,
      resolved_at = CASE WHEN jsonb_array_length(agent_ids - $2::text) = 0 THEN clock.now END,
      last_at = clock.now, version = version + 1
    FROM clock
    WHERE ($3::text IS NULL OR condition = $3) AND state = 'firing' AND agent_ids ? $2::text
    RETURNING ${ALERT_COLUMNS}`,

  /** Params: $1 now, $2 id, $3 version, $4 severity. */
  escalateAlert: `
    WITH ${CLOCK_CTE}
    UPDATE alerts SET severity = $4, escalated_at = clock.now, last_at = clock.now, version = version + 1
    FROM clock
    WHERE id = $2 AND version = $3 AND state = 'firing'
    RETURNING ${ALERT_COLUMNS}`,

  /** Params: $1 now, $2 id, $3 version, $4 resolved (a resolved notification). */
  markAlertNotified: `
    WITH ${CLOCK_CTE}
    UPDATE alerts SET notified_at = clock.now, notified_agent_ids = agent_ids, notified_severity = severity,
      resolved_notified = $4, version = version + 1
    FROM clock
    WHERE id = $2 AND version = $3
    RETURNING ${ALERT_COLUMNS}`,

  /** Params: $1 now, $2 alert id, $3 channel, $4 kind, $5 attempt, $6 ok, $7 error. */
  recordAlertDelivery: `
    WITH ${CLOCK_CTE}
    INSERT INTO alert_notifications (alert_id, channel, kind, attempt, ok, error, at)
    SELECT $2, $3, $4, $5, $6, $7, clock.now FROM clock
    RETURNING ${ALERT_NOTIFICATION_COLUMNS}`,

  /** Params: $1 id. */
  selectAlert: `SELECT ${ALERT_COLUMNS} FROM alerts WHERE id = $1`,

  /**
   * Newest first, before $1 (seq), at most $2. Filters: $3 states (text[], null = any), $4 unsettled
   * (firing, or resolved with the resolution not yet notified).
   */
  listAlerts: `
    SELECT ${ALERT_COLUMNS} FROM alerts
    WHERE seq < $1
      AND ($3::text[] IS NULL OR state = ANY ($3::text[]))
      AND (NOT $4::boolean OR state = 'firing' OR (notified_at IS NOT NULL AND NOT resolved_notified))
    ORDER BY seq DESC LIMIT $2`,

  /** The latest notifications of the alerts $1 (text[]), oldest first. */
  listNotifications: `
    SELECT ${ALERT_NOTIFICATION_COLUMNS} FROM (
      SELECT *, row_number() OVER (PARTITION BY alert_id ORDER BY seq DESC) AS nth FROM alert_notifications
      WHERE alert_id = ANY ($1::text[])) n
    WHERE nth <= ${NOTIFICATIONS_PER_ALERT}
    ORDER BY seq`,
} as const;
