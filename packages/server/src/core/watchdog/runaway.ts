/**
 * The four `resource_runaway` rules (docs/design.md §6.2) as separate pure functions over an agent's
 * samples: each returns a finding (when the rule holds, since when, and evidence a person can read)
 * or null. Sizes are bytes, times epoch ms, durations ms.
 *
 * - `rss_limit`: the latest RSS is above `rssLimitBytes`.
 * - `rss_growth`: RSS rises steadily: the least-squares slope over the last `rssWindowMs` of samples
 *   is above `rssGrowthBytesPerMin`, the line fits (r² ≥ `minFit`), and there are at least
 *   `MIN_RSS_GROWTH_SAMPLES` samples spanning at least half the window.
 * - `cpu_pinned`: CPU above `cpuPercent` in every sample of the last `cpuWindowMs` (the run of high
 *   samples began at or before the window's start) while progress did not move in that window.
 * - `iteration_slow`: the latest loop iteration took longer than `iterationFactor` × the agent type's
 *   p95 (once the baseline rests on `minBaselineSamples`), or longer than `maxIterationMs`.
 *
 * The RSS rules read the window ending at the latest sample, so only a new sample changes their
 * answer; `cpu_pinned` reads the window ending `now` and gives the time it will hold
 * (`cpuPinnedOpensAt`) so the coordinator can wake up for it.
 */
import type { JsonObject, PolicyView } from '@rouse/protocol';
import type { BaselineView } from './baseline.js';
import {
  latestPoint,
  type MetricPoint,
  SAMPLE_CPU,
  SAMPLE_ITERATION,
  SAMPLE_RSS,
  type SampleMetric,
  type SampleRing,
} from './samples.js';

export const RUNAWAY_RULES = ['rss_limit', 'rss_growth', 'cpu_pinned', 'iteration_slow'] as const;
export type RunawayRule = (typeof RUNAWAY_RULES)[number];

/** A rule that holds: since when, and what it saw (`evidence.rule` names it). */
export interface RunawayFinding {
  rule: RunawayRule;
  since: number;
  evidence: JsonObject;
}

/** The policy's resource limits (ms, bytes). */
export type ResourceLimits = PolicyView['resources'];

/** Samples the growth fit needs at least. */
export const MIN_RSS_GROWTH_SAMPLES = 5;
const MS_PER_MIN = 60_000;

/** A least-squares line through points: slope per minute, and how well it fits (r²). */
export interface LinearFit {
  slopePerMin: number;
  /** 1 − SSres/SStot, in [0, 1]; 1 for a flat series (a flat line fits it exactly). */
  r2: number;
}

/** The points of one metric in a window, and the least-squares line through them. */
export interface WindowFit {
  /** Points in the window (samples that reported the metric). */
  n: number;
  /** The window's first and last points, in ring order. */
  first: MetricPoint;
  last: MetricPoint;
  /** Null with fewer than 2 points or all at one time. */
  fit: LinearFit | null;
}

/**
 * The least-squares fit of one metric over time, for the samples whose time lies in `[from, to]`
 * (skipping those without the metric); null when none lies there. Two passes over the ring and no
 * copy of it: it runs on every heartbeat. The sums are taken about the means, so that epoch-ms times
 * (~1.7e12) do not cancel each other out.
 */
export function windowFit(
  samples: SampleRing,
  metric: SampleMetric,
  from: number,
  to: number,
): WindowFit | null {
  let n = 0;
  let mx = 0;
  let my = 0;
  let firstAt = 0;
  let firstValue = 0;
  let lastAt = 0;
  let lastValue = 0;
  for (let i = 0; i < samples.length; i++) {
    const at = samples.time(i);
    const value = samples.value(i, metric);
    if (value === null || at < from || at > to) continue;
    if (n === 0) {
      firstAt = at;
      firstValue = value;
    }
    lastAt = at;
    lastValue = value;
    n++;
    mx += at;
    my += value;
  }
  if (n === 0) return null;
  const first = { at: firstAt, value: firstValue };
  const last = { at: lastAt, value: lastValue };
  if (n < 2) return { n, first, last, fit: null };
  mx /= n;
  my /= n;
  let sxx = 0;
  let sxy = 0;
  let syy = 0;
  for (let i = 0; i < samples.length; i++) {
    const at = samples.time(i);
    const value = samples.value(i, metric);
    if (value === null || at < from || at > to) continue;
    const dx = at - mx;
    const dy = value - my;
    sxx += dx * dx;
    sxy += dx * dy;
    syy += dy * dy;
  }
  if (sxx === 0) return { n, first, last, fit: null };
  const slope = sxy / sxx;
  const r2 = syy === 0 ? 1 : Math.min(1, Math.max(0, (sxy * sxy) / (sxx * syy)));
  return { n, first, last, fit: { slopePerMin: slope * MS_PER_MIN, r2 } };
}

/** `rss_limit`: the latest RSS above the limit; since the first of the samples above it in a row. */
export function rssLimitRule(
  samples: SampleRing,
  limits: Pick<ResourceLimits, 'rssLimitBytes'>,
): RunawayFinding | null {
  const limit = limits.rssLimitBytes;
  if (limit === null) return null;
  const run = trailingRun(samples, SAMPLE_RSS, (value) => value > limit);
  if (run === null) return null;
  return {
    rule: 'rss_limit',
    since: run.first.at,
    evidence: { rule: 'rss_limit', rssBytes: run.last.value, rssLimitBytes: limit, at: run.last.at },
  };
}

/** `rss_growth`: a steady rise over the window ending at the latest RSS sample. */
export function rssGrowthRule(
  samples: SampleRing,
  limits: Pick<ResourceLimits, 'rssGrowthBytesPerMin' | 'rssWindowMs' | 'minFit'>,
): RunawayFinding | null {
  const { rssGrowthBytesPerMin: growth, rssWindowMs: windowMs, minFit } = limits;
  if (growth === null) return null;
  const latest = latestPoint(samples, SAMPLE_RSS);
  if (latest === null) return null;
  const w = windowFit(samples, SAMPLE_RSS, latest.at - windowMs, latest.at);
  if (w === null || w.n < MIN_RSS_GROWTH_SAMPLES) return null;
  const { first, last, fit } = w;
  if (last.at - first.at < windowMs / 2) return null;
  if (fit === null || fit.slopePerMin <= growth || fit.r2 < minFit) return null;
  return {
    rule: 'rss_growth',
    since: last.at,
    evidence: {
      rule: 'rss_growth',
      slopeBytesPerMin: Math.round(fit.slopePerMin),
      r2: round3(fit.r2),
      rssGrowthBytesPerMin: growth,
      minFit,
      windowMs,
      samples: w.n,
      fromAt: first.at,
      toAt: last.at,
      firstRssBytes: first.value,
      lastRssBytes: last.value,
    },
  };
}

/**
 * When `cpu_pinned` holds (or will hold if nothing changes): the run of samples above `cpuPercent`
 * that reaches the latest CPU sample must be `cpuWindowMs` old, and so must the last progress
 * (`lastProgressAt`; null = never reported, which does not hold the rule back). Null when CPU is
 * not above the threshold now (or the rule is off).
 */
export function cpuPinnedOpensAt(
  samples: SampleRing,
  limits: Pick<ResourceLimits, 'cpuPercent' | 'cpuWindowMs'>,
  lastProgressAt: number | null,
): number | null {
  const threshold = limits.cpuPercent;
  if (threshold === null) return null;
  const run = trailingRun(samples, SAMPLE_CPU, (value) => value > threshold);
  if (run === null) return null;
  return Math.max(run.first.at, lastProgressAt ?? -Infinity) + limits.cpuWindowMs;
}

/** `cpu_pinned`: CPU above the threshold for the whole window ending `now`, with no progress. */
export function cpuPinnedRule(
  samples: SampleRing,
  now: number,
  limits: Pick<ResourceLimits, 'cpuPercent' | 'cpuWindowMs'>,
  lastProgressAt: number | null,
): RunawayFinding | null {
  const opensAt = cpuPinnedOpensAt(samples, limits, lastProgressAt);
  if (opensAt === null || now < opensAt) return null;
  const threshold = limits.cpuPercent!;
  const run = trailingRun(samples, SAMPLE_CPU, (value) => value > threshold)!;
  const inWindow = run.points.filter((p) => p.at >= now - limits.cpuWindowMs);
  return {
    rule: 'cpu_pinned',
    since: opensAt,
    evidence: {
      rule: 'cpu_pinned',
      cpuPercentThreshold: threshold,
      minCpuPercent: Math.min(...(inWindow.length > 0 ? inWindow : [run.last]).map((p) => p.value)),
      lastCpuPercent: run.last.value,
      pinnedSinceAt: run.first.at,
      windowMs: limits.cpuWindowMs,
      lastProgressAt,
      samples: run.points.length,
    },
  };
}

/** `iteration_slow`: the latest iteration above factor × the type's p95, or above `maxIterationMs`. */
export function iterationSlowRule(
  samples: SampleRing,
  limits: Pick<ResourceLimits, 'iterationFactor' | 'maxIterationMs' | 'minBaselineSamples'>,
  baseline: BaselineView | null,
): RunawayFinding | null {
  const { iterationFactor, maxIterationMs, minBaselineSamples } = limits;
  const useBaseline = iterationFactor !== null && baseline !== null && baseline.count >= minBaselineSamples;
  const baselineLimitMs = useBaseline ? Math.round(iterationFactor * baseline.p95Ms) : null;
  const limitMs = minOf(baselineLimitMs, maxIterationMs);
  if (limitMs === null) return null;
  const run = trailingRun(samples, SAMPLE_ITERATION, (value) => value > limitMs);
  if (run === null) return null;
  return {
    rule: 'iteration_slow',
    since: run.first.at,
    evidence: {
      rule: 'iteration_slow',
      iterationMs: run.last.value,
      at: run.last.at,
      limitMs,
      exceeded: limitMs === baselineLimitMs ? 'baseline' : 'max_iteration',
      iterationFactor,
      baselineP95Ms: baseline === null ? null : Math.round(baseline.p95Ms),
      baselineCount: baseline?.count ?? 0,
      minBaselineSamples,
      maxIterationMs,
    },
  };
}

/**
 * The run of samples reporting `metric` whose values pass `pred` and that reaches the latest sample
 * reporting it (samples without the metric are skipped), as points oldest first; null when the
 * latest one does not pass. Read backwards from the ring, so only the run's points are built: these
 * rules run on every heartbeat, and the run is usually empty.
 */
function trailingRun(
  samples: SampleRing,
  metric: SampleMetric,
  pred: (value: number) => boolean,
): { first: MetricPoint; last: MetricPoint; points: MetricPoint[] } | null {
  const points: MetricPoint[] = [];
  for (let i = samples.length - 1; i >= 0; i--) {
    const value = samples.value(i, metric);
    if (value === null) continue;
    if (!pred(value)) break;
    points.push({ at: samples.time(i), value });
  }
  if (points.length === 0) return null;
  points.reverse();
  return { first: points[0]!, last: points.at(-1)!, points };
}

function minOf(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.min(a, b);
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
