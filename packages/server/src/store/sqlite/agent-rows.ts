/** SQLite's agents and agent_conditions rows, their JSON text parsed into the shared row shapes. */
import { AGENT_JSON_COLUMNS, type AgentRow, type ConditionRow, toConditionRecord } from '../agent-row.js';
import type { ConditionRecord } from '../store.js';
import { decodeSamples } from './sample-ring.js';

/** A raw agents row (JSON columns as text, samples as a binary ring) with its columns decoded. */
export function agentRow(raw: Record<string, unknown>): AgentRow {
  const row = { ...raw };
  for (const c of AGENT_JSON_COLUMNS) {
    const text = row[c];
    row[c] = typeof text === 'string' ? JSON.parse(text) : null;
  }
  row.samples = decodeSamples(raw.samples);
  return row as unknown as AgentRow;
}

/** Condition rows (evidence as text) → records. */
export function conditionRows(rows: readonly ConditionRow[]): ConditionRecord[] {
  return rows.map((r) =>
    toConditionRecord({
      ...r,
      evidence: JSON.parse(r.evidence as unknown as string) as ConditionRow['evidence'],
    }),
  );
}
