/**
 * What an agent heartbeat changes in the agent's row (the `recordAgentHeartbeats` contract), as a pure
 * function of the row, the input and the store's now. SQLite applies it inside its write transaction;
 * PostgreSQL computes the same in its statement (`postgres/agent-statements.ts`). `metrics` and
 * `metadata` are not computed here: a beat that carries them replaces them, one that does not keeps the
 * stored ones (a COALESCE in both backends' SQL, so a heartbeat never reads the stored metadata).
 */
import type { Json } from '@rouse/protocol';
import type { AgentRow, BeatStateColumn } from './agent-row.js';
import type { AgentHeartbeatInput } from './agent-store.js';

/** The columns of the row a heartbeat reads to compute what it sets. */
export type BeatingRow = Pick<AgentRow, BeatStateColumn | 'started_at'>;

/** The columns a heartbeat sets (JSON columns as values), besides metrics and metadata. */
export type HeartbeatColumns = Pick<
  AgentRow,
  BeatStateColumn | 'lease_expires_at' | 'heartbeat_interval_ms'
> & {
  heartbeat_timeout_ms: number;
};

const sameJson = (a: Json | null, b: Json | null): boolean => JSON.stringify(a) === JSON.stringify(b);

export function heartbeatColumns(row: BeatingRow, input: AgentHeartbeatInput, now: number): HeartbeatColumns {
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
  if (
    input.sample !== undefined &&
    (samples.length === 0 || now - samples.time(samples.length - 1) >= input.sampleSpacingMs)
  ) {
    const s = input.sample;
    samples = samples.append([now, s.rssBytes, s.cpuPercent, s.iterationMs], Math.max(1, input.maxSamples));
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
    progress,
    phase,
    progress_changed_at: progressChangedAt,
    samples,
    gaps,
  };
}
