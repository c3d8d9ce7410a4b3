import { describe, expect, it } from 'vitest';
import type { AlertTiming } from '../policies/alert-settings.js';
import {
  type AlertGroupState,
  isInhibited,
  maxSeverity,
  nextAlertStep,
  nextSeverity,
} from './alert-rules.js';

const T0 = 1_700_000_000_000;
const TIMING: AlertTiming = {
  groupWaitMs: 30_000,
  groupIntervalMs: 300_000,
  repeatIntervalMs: 14_400_000,
  escalateAfterMs: 900_000,
};

function group(overrides: Partial<AlertGroupState> = {}): AlertGroupState {
  return {
    condition: 'progress_stalled',
    state: 'firing',
    severity: 'medium',
    agentIds: ['a1', 'a2'],
    firstAt: T0,
    notifiedAt: null,
    notifiedAgentIds: [],
    notifiedSeverity: null,
    escalatedAt: null,
    resolvedNotified: false,
    ...overrides,
  };
}

/** A group notified at `at` with its current agents and severity. */
const notified = (at: number, overrides: Partial<AlertGroupState> = {}): AlertGroupState => {
  const g = group(overrides);
  return { ...g, notifiedAt: at, notifiedAgentIds: [...g.agentIds], notifiedSeverity: g.severity };
};

describe('alert grouping rules', () => {
  it('waits group_wait before the first notification, then notifies the group once', () => {
    expect(nextAlertStep(group(), TIMING, T0, false)).toEqual({ do: 'wait', at: T0 + 30_000 });
    expect(nextAlertStep(group(), TIMING, T0 + 29_999, false)).toEqual({ do: 'wait', at: T0 + 30_000 });
    expect(nextAlertStep(group(), TIMING, T0 + 30_000, false)).toEqual({ do: 'notify', kind: 'firing' });
  });

  it('notifies new members at most every group_interval after the last notification', () => {
    const g = { ...notified(T0 + 30_000), agentIds: ['a1', 'a2', 'a3'] };
    expect(nextAlertStep(g, TIMING, T0 + 60_000, false)).toEqual({ do: 'wait', at: T0 + 330_000 });
    expect(nextAlertStep(g, TIMING, T0 + 330_000, false)).toEqual({ do: 'notify', kind: 'changed' });
  });

  it('an agent leaving is no news; a raise at a higher severity is', () => {
    const left = { ...notified(T0 + 30_000), agentIds: ['a1'] };
    expect(nextAlertStep(left, TIMING, T0 + 330_000, false)).toEqual({ do: 'wait', at: T0 + 900_000 });
    const higher = { ...notified(T0 + 30_000), severity: 'high' as const };
    expect(nextAlertStep(higher, TIMING, T0 + 330_000, false)).toEqual({ do: 'notify', kind: 'changed' });
  });

  it('repeats an unchanged firing group every repeat_interval', () => {
    const timing = { ...TIMING, escalateAfterMs: null };
    const g = notified(T0 + 30_000);
    expect(nextAlertStep(g, timing, T0 + 330_000, false)).toEqual({
      do: 'wait',
      at: T0 + 30_000 + 14_400_000,
    });
    expect(nextAlertStep(g, timing, T0 + 30_000 + 14_400_000, false)).toEqual({
      do: 'notify',
      kind: 'repeat',
    });
  });

  it('escalates one level escalate_after after it opened, then after each escalation, up to critical', () => {
    const g = notified(T0 + 30_000, { severity: 'low' });
    expect(nextAlertStep(g, TIMING, T0 + 899_999, false)).toEqual({ do: 'wait', at: T0 + 900_000 });
    expect(nextAlertStep(g, TIMING, T0 + 900_000, false)).toEqual({ do: 'escalate', severity: 'medium' });
    const escalated = { ...g, severity: 'medium' as const, escalatedAt: T0 + 900_000 };
    expect(nextAlertStep(escalated, TIMING, T0 + 900_000, false)).toEqual({
      do: 'notify',
      kind: 'escalated',
    });
    const told = notified(T0 + 900_000, { severity: 'medium', escalatedAt: T0 + 900_000 });
    expect(nextAlertStep(told, TIMING, T0 + 1_800_000, false)).toEqual({ do: 'escalate', severity: 'high' });
    const top = notified(T0 + 900_000, { severity: 'critical', escalatedAt: T0 + 900_000 });
    expect(nextAlertStep(top, TIMING, T0 + 1_800_000, false)).toEqual({
      do: 'wait',
      at: T0 + 900_000 + 14_400_000,
    });
  });

  it('never escalates when escalate_after is off', () => {
    const g = notified(T0 + 30_000, { severity: 'low' });
    const step = nextAlertStep(g, { ...TIMING, escalateAfterMs: null }, T0 + 10_000_000, false);
    expect(step).toEqual({ do: 'wait', at: T0 + 30_000 + 14_400_000 });
  });

  it('an inhibited group is neither notified nor escalated', () => {
    expect(nextAlertStep(group(), TIMING, T0 + 10_000_000, true)).toEqual({ do: 'inhibited' });
    expect(nextAlertStep(notified(T0, { severity: 'low' }), TIMING, T0 + 10_000_000, true)).toEqual({
      do: 'inhibited',
    });
  });

  it('a resolved group is notified resolved once, and only if it was ever notified', () => {
    const resolved = { state: 'resolved' as const, agentIds: [] };
    expect(nextAlertStep(group(resolved), TIMING, T0, false)).toEqual({ do: 'settled' });
    expect(nextAlertStep(notified(T0, resolved), TIMING, T0 + 1, false)).toEqual({
      do: 'notify',
      kind: 'resolved',
    });
    expect(
      nextAlertStep(notified(T0, { ...resolved, resolvedNotified: true }), TIMING, T0 + 1, false),
    ).toEqual({
      do: 'settled',
    });
  });

  it('inhibits stalls (and persisting errors) whose every agent is in a firing dependency_down group', () => {
    const down = new Set(['a1', 'a2', 'a9']);
    expect(isInhibited(group(), down)).toBe(true);
    expect(isInhibited(group({ agentIds: ['a1', 'a3'] }), down)).toBe(false);
    expect(isInhibited(group({ condition: 'error_persisting' }), down)).toBe(true);
    expect(isInhibited(group({ condition: 'heartbeat_timeout' }), down)).toBe(false);
    expect(isInhibited(group({ condition: 'dependency_down' }), down)).toBe(false);
    expect(isInhibited(group({ state: 'resolved', agentIds: [] }), down)).toBe(false);
  });

  it('orders severities low < medium < high < critical', () => {
    expect(nextSeverity('low')).toBe('medium');
    expect(nextSeverity('high')).toBe('critical');
    expect(nextSeverity('critical')).toBeNull();
    expect(maxSeverity('low', 'high')).toBe('high');
    expect(maxSeverity('critical', 'medium')).toBe('critical');
  });
});
