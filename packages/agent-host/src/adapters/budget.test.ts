import { describe, expect, it } from 'vitest';
import { addUsage, breachStanding, budgetStanding, EMPTY_USAGE, mergeLimits, overBudget } from './budget.js';

describe('budget rules', () => {
  it('adds incremental usage and keeps the largest cumulative figures', () => {
    let t = addUsage(EMPTY_USAGE, { inputTokens: 10, outputTokens: 5, costUsd: 0.01, cumulative: false });
    t = addUsage(t, { inputTokens: 3, outputTokens: 2, cachedInputTokens: 1, cumulative: false });
    expect(t).toMatchObject({ inputTokens: 13, outputTokens: 7, cachedInputTokens: 1, costUsd: 0.01 });
    let c = addUsage(EMPTY_USAGE, { inputTokens: 100, outputTokens: 20, cumulative: true });
    c = addUsage(c, { inputTokens: 250, outputTokens: 40, cumulative: true });
    // a resumed session's totals never lower the tally
    c = addUsage(c, { inputTokens: 90, outputTokens: 10, cumulative: true });
    expect(c).toMatchObject({ inputTokens: 250, outputTokens: 40, costUsd: null });
  });

  it('names the first limit passed, with what was spent', () => {
    const t = { ...EMPTY_USAGE, inputTokens: 900, outputTokens: 200, costUsd: 0.5, turns: 3 };
    expect(overBudget(t, 1000, {})).toBeNull();
    expect(overBudget(t, 1000, { maxTokens: 1100 })).toBeNull();
    expect(overBudget(t, 1000, { maxTokens: 1000 })).toEqual({
      limit: 'maxTokens',
      max: 1000,
      used: 1100,
      reason: 'budget exceeded: 1100 tokens spent, maxTokens is 1000',
    });
    expect(overBudget(t, 1000, { maxCostUsd: 0.25 })?.reason).toBe(
      'budget exceeded: 0.5000 USD spent, maxCostUsd is 0.25',
    );
    expect(overBudget(t, 1000, { maxTurns: 2 })?.limit).toBe('maxTurns');
    expect(overBudget(t, 5000, { maxWallClockMs: 4000 })?.limit).toBe('maxWallClockMs');
    expect(overBudget(t, 5000, { maxTurns: 3, maxWallClockMs: 5000 })).toBeNull();
  });

  it('merges payload limits over per-type defaults field by field', () => {
    expect(mergeLimits({ maxTokens: 5 }, { maxTokens: 9, maxTurns: 2 })).toEqual({
      maxTokens: 5,
      maxCostUsd: null,
      maxTurns: 2,
      maxWallClockMs: null,
    });
  });

  it('reports the limit closest to being spent, and a breach as what the heartbeat carries', () => {
    const t = { ...EMPTY_USAGE, inputTokens: 300, outputTokens: 100, costUsd: 0.9, turns: 2 };
    expect(budgetStanding(t, 5000, {})).toBeNull();
    expect(budgetStanding(t, 5000, { maxTokens: 1000, maxTurns: 10 })).toEqual({
      kind: 'tokens',
      limit: 1000,
      used: 400,
    });
    expect(budgetStanding(t, 5000, { maxTokens: 1000, maxCostUsd: 1, maxWallClockMs: 60_000 })).toEqual({
      kind: 'cost_usd',
      limit: 1,
      used: 0.9,
    });
    // the CLI's own dollar limit counts too (Claude Code stops itself at it)
    expect(budgetStanding(t, 5000, { maxTokens: 1000, maxBudgetUsd: 0.5 })).toEqual({
      kind: 'cost_usd',
      limit: 0.5,
      used: 0.9,
    });
    expect(budgetStanding(t, 9000, { maxWallClockMs: 6000, maxTurns: 4 })).toEqual({
      kind: 'wall_clock_ms',
      limit: 6000,
      used: 9000,
    });
    const breach = overBudget({ ...t, inputTokens: 1300 }, 0, { maxTokens: 1000 })!;
    expect(breachStanding(breach)).toEqual({ kind: 'tokens', limit: 1000, used: 1400 });
  });
});
