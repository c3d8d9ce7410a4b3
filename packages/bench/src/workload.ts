/**
 * What every workload takes and returns. A workload starts its own coordinator (so workloads do not
 * disturb each other) on the store it is given, and returns metrics for the report table plus raw
 * details for the JSON file.
 */
import {
  formatProfileSummary,
  type ProfileSummary,
  type ProfileWindow,
  summarizeProfile,
} from './profile-summary.js';
import type { BenchStore } from './stores.js';

export interface WorkloadContext {
  store: BenchStore;
  /** Smaller counts for a CI smoke run (a workload in under 30 s; fleet waits out its timeouts, ~1.5 min). */
  quick: boolean;
  /** Which worker the SDK-worker workloads spawn: the SDK `Worker` or a bare claim loop. */
  workerMode: 'sdk' | 'raw';
  /** The fleet's policy has a recovery ladder (`--no-ladder`: without, for an A/B). */
  ladder: boolean;
  /** With `--cpu-prof`: where coordinator CPU profiles go (summarised per workload). */
  cpuProfileDir?: string;
  /** Progress lines (stderr). */
  log(message: string): void;
}

export interface Target {
  op: '>=' | '<=';
  value: number;
}

export interface Metric {
  workload: string;
  metric: string;
  /** null when it could not be measured. */
  value: number | null;
  unit: string;
  target?: Target;
  /**
   * How peers go about the same thing, in words (e.g. `polled: + scan interval`). Never a number
   * remembered from another run: this machine's speed moves between days, so peers are compared
   * only side by side in one run (the peers bench, docs/performance.md).
   */
  peer?: string;
}

export interface WorkloadResult {
  workload: string;
  store: string;
  metrics: Metric[];
  /** Raw numbers for the JSON report (counts, timings, summaries). */
  details: Record<string, unknown>;
  /** Set when the workload failed; its metrics may be partial. */
  error?: string;
}

export type Workload = (ctx: WorkloadContext) => Promise<WorkloadResult>;

/** Whether a metric meets its target (null: no target or no value). */
export function meetsTarget(m: Metric): boolean | null {
  if (!m.target || m.value === null || !Number.isFinite(m.value)) return null;
  return m.target.op === '>=' ? m.value >= m.target.value : m.value <= m.target.value;
}

/**
 * With `--cpu-prof`: summarise the coordinator's profile over each measured window, into `details`
 * (as `cpuProfile`) and onto the log.
 */
export function attachProfile(
  ctx: WorkloadContext,
  details: Record<string, unknown>,
  cpuProfile: string | null,
  windows: Record<string, ProfileWindow>,
): void {
  if (!cpuProfile) return;
  const summaries: Record<string, ProfileSummary> = {};
  try {
    for (const [name, window] of Object.entries(windows)) {
      const summary = summarizeProfile(cpuProfile, window);
      summaries[name] = summary;
      ctx.log(formatProfileSummary(`coordinator profile, ${name}`, summary));
    }
  } catch (err) {
    ctx.log(`could not read the CPU profile ${cpuProfile}: ${String(err)}`);
  }
  details.cpuProfile = summaries;
}
