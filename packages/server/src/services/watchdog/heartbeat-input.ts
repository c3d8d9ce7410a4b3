/**
 * What an agent heartbeat asks the store to record, from the request and the agent's policy: the
 * lease (timeout factor × interval, or the adaptive one; never ending inside the quiet period), the progress the stall
 * clock follows (the heartbeat's own `progress`/`phase`, or the policy's `progress_field` of its
 * `metadata`), a metric sample for the resource detectors (spaced so the ring covers their longest
 * window), and the gaps the adaptive timeout needs.
 */
import type { AgentHeartbeatRequest, Json } from '@rouse/protocol';
import type { ResolvedPolicy } from '../../core/policies/resolved-policy.js';
import type { AgentHeartbeatInput } from '../../store/store.js';

/** Samples kept per agent. */
export const MAX_SAMPLES = 64;
/** Heartbeat gaps kept per agent when its policy is adaptive. */
export const MAX_GAPS = 32;
const MIN_SAMPLE_SPACING_MS = 250;

/** The agent's fixed lease length under `policy` (timeout factor × interval). */
export function leaseMsOf(policy: ResolvedPolicy): number {
  return Math.round(policy.heartbeat.expectedIntervalMs * policy.heartbeat.timeoutFactor);
}

/**
 * Samples are spaced so that `MAX_SAMPLES` of them cover the longest window of the rules the policy
 * turns on (none: every heartbeat's metrics are a sample). The last heartbeat's metrics are read
 * besides the ring, so the limits see the latest values whatever the spacing.
 */
export function sampleSpacingMsOf(policy: ResolvedPolicy): number {
  const r = policy.resources;
  const windows = [
    r.rssGrowthBytesPerMin === null ? 0 : r.rssWindowMs,
    r.cpuPercent === null ? 0 : r.cpuWindowMs,
  ];
  const window = Math.max(...windows);
  return window === 0 ? 0 : Math.max(MIN_SAMPLE_SPACING_MS, Math.floor(window / (MAX_SAMPLES - 4)));
}

/** The progress this heartbeat reports for the stall clock, if any. */
export function reportedProgress(
  req: AgentHeartbeatRequest,
  policy: ResolvedPolicy,
): { value: Json; phase: string | null } | undefined {
  const field = policy.stallDetection.progressField;
  if (field !== null && req.metadata !== undefined && Object.hasOwn(req.metadata, field)) {
    return { value: req.metadata[field] ?? null, phase: req.phase ?? null };
  }
  if (req.progress !== undefined || req.phase !== undefined) {
    return { value: req.progress ?? null, phase: req.phase ?? null };
  }
  return undefined;
}

export function heartbeatInput(
  agentId: string,
  incarnation: number,
  req: AgentHeartbeatRequest,
  policy: ResolvedPolicy,
  leaseMs: number = leaseMsOf(policy),
): AgentHeartbeatInput {
  const m = req.metrics;
  return {
    agentId,
    incarnation,
    status: req.status,
    statusMessage: req.statusMessage,
    metrics: m,
    metadata: req.metadata,
    progress: reportedProgress(req, policy),
    leaseMs,
    quietPeriodMs: policy.quietPeriodMs,
    heartbeatIntervalMs: policy.heartbeat.expectedIntervalMs,
    sample:
      m === undefined
        ? undefined
        : {
            rssBytes: m.rssBytes ?? null,
            cpuPercent: m.cpuPercent ?? null,
            iterationMs: m.iterationMs ?? null,
          },
    sampleSpacingMs: sampleSpacingMsOf(policy),
    maxSamples: MAX_SAMPLES,
    maxGaps: policy.heartbeat.adaptive ? MAX_GAPS : 0,
  };
}
