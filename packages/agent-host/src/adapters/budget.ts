/**
 * The budget guard's rules (pure): what a task may spend — tokens, dollars, turns, wall-clock time —
 * and whether what it spent so far is past any limit. Limits come from the task's payload, else from
 * the adapter's defaults for the task's type; spending past one stops the CLI and fails the task for
 * good with the reason (a `resource_runaway`).
 */

export interface BudgetLimits {
  /** Input + output tokens (cached input counted in input, as the CLIs report it). */
  maxTokens?: number | null;
  maxCostUsd?: number | null;
  maxTurns?: number | null;
  maxWallClockMs?: number | null;
}

/** What a task spent so far. */
export interface UsageTally {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  /** null until a CLI reports a cost. */
  costUsd: number | null;
  turns: number;
}

export const EMPTY_USAGE: Readonly<UsageTally> = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  cachedInputTokens: 0,
  costUsd: null,
  turns: 0,
});

/** A usage report of a CLI (`CliEvent` of type `usage`). */
export interface UsageReport {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens?: number;
  costUsd?: number;
  cumulative: boolean;
}

/**
 * Fold a usage report in. A cumulative report holds the session's totals so far (it may also cover
 * earlier runs of the same session, resumed): each figure becomes the larger of the tally and the
 * report. Otherwise the report adds to the tally.
 */
export function addUsage(tally: UsageTally, u: UsageReport): UsageTally {
  const cost = u.costUsd;
  if (u.cumulative) {
    return {
      ...tally,
      inputTokens: Math.max(tally.inputTokens, u.inputTokens),
      outputTokens: Math.max(tally.outputTokens, u.outputTokens),
      cachedInputTokens: Math.max(tally.cachedInputTokens, u.cachedInputTokens ?? 0),
      costUsd: cost === undefined ? tally.costUsd : Math.max(tally.costUsd ?? 0, cost),
    };
  }
  return {
    ...tally,
    inputTokens: tally.inputTokens + u.inputTokens,
    outputTokens: tally.outputTokens + u.outputTokens,
    cachedInputTokens: tally.cachedInputTokens + (u.cachedInputTokens ?? 0),
    costUsd: cost === undefined ? tally.costUsd : (tally.costUsd ?? 0) + cost,
  };
}

/** A limit passed: which one, the limit and what was spent, and a sentence for the task's error. */
export interface BudgetBreach {
  limit: 'maxTokens' | 'maxCostUsd' | 'maxTurns' | 'maxWallClockMs';
  max: number;
  used: number;
  reason: string;
}

/** The first limit `tally` (after `elapsedMs` of wall-clock time) is past, or null. */
export function overBudget(tally: UsageTally, elapsedMs: number, limits: BudgetLimits): BudgetBreach | null {
  const tokens = tally.inputTokens + tally.outputTokens;
  const checks: [BudgetBreach['limit'], number | null | undefined, number, string][] = [
    ['maxTokens', limits.maxTokens, tokens, 'tokens'],
    ['maxCostUsd', limits.maxCostUsd, tally.costUsd ?? 0, 'USD'],
    ['maxTurns', limits.maxTurns, tally.turns, 'turns'],
    ['maxWallClockMs', limits.maxWallClockMs, elapsedMs, 'ms of wall-clock time'],
  ];
  for (const [limit, max, used, unit] of checks) {
    if (max === null || max === undefined || !(used > max)) continue;
    const shown = limit === 'maxCostUsd' ? used.toFixed(4) : String(Math.round(used));
    return { limit, max, used, reason: `budget exceeded: ${shown} ${unit} spent, ${limit} is ${max}` };
  }
  return null;
}

/** Limits taken field by field from `first`, else from `second`. */
export function mergeLimits(first: BudgetLimits, second: BudgetLimits): BudgetLimits {
  return {
    maxTokens: first.maxTokens ?? second.maxTokens ?? null,
    maxCostUsd: first.maxCostUsd ?? second.maxCostUsd ?? null,
    maxTurns: first.maxTurns ?? second.maxTurns ?? null,
    maxWallClockMs: first.maxWallClockMs ?? second.maxWallClockMs ?? null,
  };
}

/** A task's spend against one limit, as the agent's heartbeat reports it (`metrics.budgets`). */
export interface BudgetStanding {
  kind: 'tokens' | 'cost_usd' | 'turns' | 'wall_clock_ms';
  limit: number;
  used: number;
}

const KIND_OF: Record<BudgetBreach['limit'], BudgetStanding['kind']> = {
  maxTokens: 'tokens',
  maxCostUsd: 'cost_usd',
  maxTurns: 'turns',
  maxWallClockMs: 'wall_clock_ms',
};

/** The standing of a breach (what the heartbeat reports once a limit is passed). */
export function breachStanding(b: BudgetBreach): BudgetStanding {
  return { kind: KIND_OF[b.limit], limit: b.max, used: b.used };
}

/**
 * The limit `tally` (after `elapsedMs`) is closest to — the largest share of its limit spent — or
 * null when no limit is set. `maxBudgetUsd` (the CLI's own dollar limit) counts as a `cost_usd` limit
 * too, so a CLI that stops itself at it is reported with its spend.
 */
export function budgetStanding(
  tally: UsageTally,
  elapsedMs: number,
  limits: BudgetLimits & { maxBudgetUsd?: number | null },
): BudgetStanding | null {
  const candidates: [BudgetStanding['kind'], number | null | undefined, number][] = [
    ['tokens', limits.maxTokens, tally.inputTokens + tally.outputTokens],
    ['cost_usd', limits.maxCostUsd, tally.costUsd ?? 0],
    ['cost_usd', limits.maxBudgetUsd, tally.costUsd ?? 0],
    ['turns', limits.maxTurns, tally.turns],
    ['wall_clock_ms', limits.maxWallClockMs, Math.max(0, Math.round(elapsedMs))],
  ];
  let best: BudgetStanding | null = null;
  for (const [kind, limit, used] of candidates) {
    if (limit === null || limit === undefined || !(limit > 0)) continue;
    if (best === null || used / limit > best.used / best.limit) best = { kind, limit, used };
  }
  return best;
}
