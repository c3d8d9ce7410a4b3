/** SQLite's agents and agent_conditions rows, their JSON text parsed into the shared row shapes. */
import type { AgentMetrics } from '@rouse/protocol';
import {
  AGENT_JSON_COLUMNS,
  type AgentRow,
  type ConditionRow,
  toConditionRecord,
  type WatchRow,
} from '../agent-row.js';
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

/** What `selectBeatingAgent` reads: the watch's columns, the held tasks and whether commands wait. */
export interface BeatRead extends WatchRow {
  held_task_ids: string[];
  has_commands: boolean;
}

const parsed = <T>(text: unknown): T | null => (typeof text === 'string' ? (JSON.parse(text) as T) : null);

/**
 * A `selectBeatingAgent` row decoded. `metrics` are the beat's own when it carries them (the stored
 * ones were not read), else the stored ones.
 */
export function beatingRow(raw: Record<string, unknown>, metrics: AgentMetrics | undefined): BeatRead {
  return {
    id: raw.id as string,
    incarnation: raw.incarnation as number,
    agent_type: raw.agent_type as string,
    policy: raw.policy as string,
    lifecycle: raw.lifecycle as WatchRow['lifecycle'],
    started_at: raw.started_at as number,
    last_heartbeat_at: raw.last_heartbeat_at as number | null,
    lease_expires_at: raw.lease_expires_at as number | null,
    heartbeat_interval_ms: raw.heartbeat_interval_ms as number,
    reported_status: raw.reported_status as WatchRow['reported_status'],
    reported_status_since: raw.reported_status_since as number,
    status_message: raw.status_message as string | null,
    metrics: metrics ?? parsed<AgentMetrics>(raw.metrics),
    requires: parsed<string[]>(raw.requires) ?? [],
    progress: parsed<WatchRow['progress']>(raw.progress),
    phase: raw.phase as string | null,
    progress_changed_at: raw.progress_changed_at as number | null,
    open_conditions: parsed<string[]>(raw.open_conditions) ?? [],
    samples: decodeSamples(raw.samples),
    gaps: parsed<number[]>(raw.gaps) ?? [],
    held_task_ids: parsed<string[]>(raw.held_task_ids) ?? [],
    has_commands: raw.has_commands === 1,
  };
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
