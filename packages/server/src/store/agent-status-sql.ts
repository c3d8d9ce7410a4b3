/**
 * An agent's derived status in SQL (`core/watchdog/agent-status.ts` in the database), so that a list
 * filtered by status reads only the agents it returns. Both dialects: `openConditions` is the
 * `open_conditions` JSON array as text (`["heartbeat_timeout", "progress_stalled tsk_1"]`).
 */
const has = (openConditions: string, kind: string, withTask = false): string =>
  `${openConditions} LIKE '%"${kind}${withTask ? '' : '"'}%'`;

export function derivedStatusSql(a: string, openConditions: string): string {
  return `(CASE
    WHEN ${a}.lifecycle = 'left' THEN 'left'
    WHEN ${a}.lifecycle = 'terminated' THEN 'terminated'
    WHEN ${has(openConditions, 'heartbeat_timeout')} THEN 'lost'
    WHEN ${a}.reported_status = 'terminating' THEN 'terminating'
    WHEN ${has(openConditions, 'progress_stalled', true)} THEN 'stalled'
    WHEN ${a}.reported_status = 'error' THEN 'error'
    WHEN ${has(openConditions, 'dependency_down')} OR ${has(openConditions, 'resource_runaway')}
      OR ${has(openConditions, 'error_persisting')} THEN 'at_risk'
    ELSE ${a}.reported_status END)`;
}
