/**
 * What an agent heartbeat changes in the agent's row (the `recordAgentHeartbeats` contract), as a pure
 * function of the row, the input and the store's now. SQLite applies it inside its write transaction;
 * PostgreSQL computes the same in its statement (`postgres/agent-statements.ts`).
 */
import type { Json } from '@rouse/protocol';
import type { AgentRow } from './agent-row.js';
import type { AgentHeartbeatInput } from './agent-store.js';

/** The columns a heartbeat sets (JSON columns as values). */
export type HeartbeatColumns = Pick<
  AgentRow,
  | 'last_heartbeat_at'
  | 'lease_expires_at'
  | 'heartbeat_interval_ms'
  | 'reported_status'
  | 'reported_status_since'
  | 'status_message'
  | 'metrics'
  | 'metadata'
  | 'progress'
  | 'phase'
  | 'progress_changed_at'
  | 'samples'
  | 'gaps'
> & { heartbeat_timeout_ms: number };

const sameJson = (a: Json | null, b: Json | null): boolean => JSON.stringify(a) === JSON.stringify(b);

export function heartbeatColumns(row: AgentRow, input: AgentHeartbeatInput, now: number): HeartbeatColumns {
  const statusChanged = input.status !== undefined && input.status !== row.reported_status;
  let progress = row.progress;
  let phase = row.phase;
  let progressChangedAt = row.progress_changed_at;
  if (input.progress !== undefined) {
    if (
      progressChangedAt === null ||
      !sameJson(progress, input.progress.value) ||
      phase !== input.progress.phase
    ) {
      progressChangedAt = now;
    }
    progress = input.progress.value;
    phase = input.progress.phase;
  }
  let samples = row.samples;
  const last = samples.at(-1);
  if (
    input.sample !== undefined &&
    (last === undefined || now - (last[0] as number) >= input.sampleSpacingMs)
  ) {
    const s = input.sample;
    const sample = [now, s.rssBytes, s.cpuPercent, s.iterationMs] as const;
    samples = [...samples, sample].slice(-Math.max(1, input.maxSamples));
  }
  let gaps: number[] = [];
  if (input.maxGaps > 0) {
    gaps = row.last_heartbeat_at === null ? row.gaps : [...row.gaps, now - row.last_heartbeat_at];
    gaps = gaps.slice(-input.maxGaps);
  }
  return {
    last_heartbeat_at: now,
    lease_expires_at: Math.max(now + input.leaseMs, row.started_at + input.quietPeriodMs),
    heartbeat_interval_ms: input.heartbeatIntervalMs,
    heartbeat_timeout_ms: input.leaseMs,
    reported_status: input.status ?? row.reported_status,
    reported_status_since: statusChanged ? now : row.reported_status_since,
    status_message: input.status === undefined ? row.status_message : (input.statusMessage ?? null),
    metrics: input.metrics ?? row.metrics,
    metadata: input.metadata ?? row.metadata,
    progress,
    phase,
    progress_changed_at: progressChangedAt,
    samples,
    gaps,
  };
}
