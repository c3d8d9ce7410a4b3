/**
 * Phi accrual suspicion (Hayashibara et al., "The φ accrual failure detector", 2004) over an agent's
 * own heartbeat gaps: instead of one fixed timeout, how unlikely is it that the next heartbeat is
 * still coming after `elapsedMs`, given the gaps this agent has shown? `phi = -log10(P(gap > elapsed))`;
 * phi 8 means a one-in-10^8 chance that the agent is alive and merely late.
 *
 * The gap distribution is taken as normal (mean and standard deviation of the recent gaps), with the
 * logistic approximation of its tail that Akka and Cassandra use. A regular agent (std-dev near 0)
 * would make the slightest delay infinitely suspicious, so the std-dev has a floor: max(σ, mean/10,
 * 10 ms). Too few gaps say nothing: below `MIN_PHI_GAPS` the functions return null and the fixed
 * timeout applies.
 */
import type { PolicyView } from '@rouse/protocol';
import { ValidationError } from '../errors.js';

/** Gaps needed before phi is trusted. */
export const MIN_PHI_GAPS = 8;
/** The std-dev floor, as a fraction of the mean gap. */
const MIN_STD_FRACTION = 0.1;
/** The absolute std-dev floor (ms). */
const MIN_STD_MS = 10;
/** Coefficients of the logistic approximation of the normal tail: 1 − Φ(y) ≈ 1 / (1 + e^(a(y))). */
const A1 = 1.5976;
const A3 = 0.070566;

/** Mean and floored std-dev of the gaps (ms), or null with fewer than `MIN_PHI_GAPS`. */
export function gapStats(gaps: readonly number[]): { meanMs: number; stdMs: number } | null {
  if (gaps.length < MIN_PHI_GAPS) return null;
  let sum = 0;
  for (const g of gaps) sum += g;
  const mean = sum / gaps.length;
  let sq = 0;
  for (const g of gaps) sq += (g - mean) ** 2;
  const std = Math.sqrt(sq / gaps.length);
  return { meanMs: mean, stdMs: Math.max(std, mean * MIN_STD_FRACTION, MIN_STD_MS) };
}

/**
 * The suspicion level after `elapsedMs` without a heartbeat, given the agent's recent gaps (ms), or
 * null with fewer than `MIN_PHI_GAPS` gaps. 0 well before the mean gap; grows without bound after it.
 */
export function phi(elapsedMs: number, gaps: readonly number[]): number | null {
  const stats = gapStats(gaps);
  if (stats === null) return null;
  const y = (elapsedMs - stats.meanMs) / stats.stdMs;
  return softplus(y * (A1 + A3 * y * y)) / Math.LN10;
}

/**
 * The elapsed time (ms, rounded up) at which phi reaches `threshold`, never below `floorMs`; null
 * with fewer than `MIN_PHI_GAPS` gaps (use the fixed timeout). Exact for the approximation above:
 * phi(t) = threshold is a cubic in the standardised gap, solved in closed form.
 */
export function phiTimeoutMs(gaps: readonly number[], threshold: number, floorMs: number): number | null {
  if (!(threshold > 0) || !Number.isFinite(threshold)) {
    throw new ValidationError('phiThreshold', `must be a finite number > 0 (got ${threshold})`);
  }
  const stats = gapStats(gaps);
  if (stats === null) return null;
  // softplus(a) = threshold·ln10  ⇔  a = ln(10^threshold − 1); for large thresholds 10^t overflows,
  // and ln(10^t − 1) = t·ln10 + ln(1 − 10^−t) ≈ t·ln10.
  const a = threshold * Math.LN10 + Math.log1p(-(10 ** -threshold));
  const y = solveCubic(A3, A1, a);
  return Math.max(floorMs, Math.ceil(stats.meanMs + y * stats.stdMs));
}

/**
 * The heartbeat timeout in force for an agent: `timeoutFactor × expectedIntervalMs`, or with
 * `adaptive` and enough gaps, the phi timeout (never below `minTimeoutMs`).
 */
export function agentHeartbeatTimeoutMs(
  heartbeat: PolicyView['heartbeat'],
  gaps: readonly number[] = [],
): number {
  const fixed = Math.round(heartbeat.timeoutFactor * heartbeat.expectedIntervalMs);
  if (!heartbeat.adaptive) return fixed;
  return phiTimeoutMs(gaps, heartbeat.phiThreshold, heartbeat.minTimeoutMs) ?? fixed;
}

/** ln(1 + e^x) without overflow. */
function softplus(x: number): number {
  return x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x));
}

/** The real root of c3·y³ + c1·y − a = 0 for c3, c1 > 0 (strictly increasing: one root), Cardano. */
function solveCubic(c3: number, c1: number, a: number): number {
  const p = c1 / c3;
  const q = -a / c3;
  const d = Math.sqrt((q * q) / 4 + (p * p * p) / 27);
  return Math.cbrt(-q / 2 + d) + Math.cbrt(-q / 2 - d);
}
