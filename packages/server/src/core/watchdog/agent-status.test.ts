import {
  AGENT_STATUSES,
  type AgentStatus,
  CONDITION_KINDS,
  type ConditionKind,
  REPORTED_AGENT_STATUSES,
  type ReportedAgentStatus,
} from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import {
  AGENT_LIFECYCLES,
  type AgentLifecycle,
  decidingCondition,
  deriveAgentStatus,
} from './agent-status.js';

/** Every subset of the condition kinds (2^5 = 32). */
function subsets(kinds: readonly ConditionKind[]): ConditionKind[][] {
  const out: ConditionKind[][] = [];
  for (let mask = 0; mask < 1 << kinds.length; mask++) {
    out.push(kinds.filter((_, i) => mask & (1 << i)));
  }
  return out;
}

/**
 * The precedence written as a list of (status, does it apply?) checks, independent of the
 * implementation's if-chain: the first status in AGENT_STATUSES order that applies wins.
 */
function expected(
  lifecycle: AgentLifecycle,
  reported: ReportedAgentStatus,
  open: readonly ConditionKind[],
): AgentStatus {
  const applies: Record<AgentStatus, boolean> = {
    left: lifecycle === 'left',
    terminated: lifecycle === 'terminated',
    lost: open.includes('heartbeat_timeout'),
    terminating: reported === 'terminating',
    stalled: open.includes('progress_stalled'),
    error: reported === 'error',
    at_risk: open.some(
      (c) => c === 'dependency_down' || c === 'resource_runaway' || c === 'error_persisting',
    ),
    running: reported === 'running',
    idle: true,
  };
  return AGENT_STATUSES.find((s) => applies[s])!;
}

describe('deriveAgentStatus', () => {
  it('follows left > terminated > lost > terminating > stalled > error > at_risk > running > idle for every combination', () => {
    let cases = 0;
    const seen = new Set<AgentStatus>();
    for (const lifecycle of AGENT_LIFECYCLES) {
      for (const reportedStatus of REPORTED_AGENT_STATUSES) {
        for (const openConditions of subsets(CONDITION_KINDS)) {
          const got = deriveAgentStatus({ lifecycle, reportedStatus, openConditions });
          expect(got, `${lifecycle} ${reportedStatus} [${openConditions.join(',')}]`).toBe(
            expected(lifecycle, reportedStatus, openConditions),
          );
          seen.add(got);
          cases++;
        }
      }
    }
    expect(cases).toBe(3 * 4 * 32);
    // Every derived status is reachable.
    expect([...seen].sort()).toEqual([...AGENT_STATUSES].sort());
  });

  it('spells out the decisive pairs', () => {
    const d = (lifecycle: AgentLifecycle, reportedStatus: ReportedAgentStatus, open: ConditionKind[]) =>
      deriveAgentStatus({ lifecycle, reportedStatus, openConditions: open });
    expect(d('left', 'running', ['heartbeat_timeout'])).toBe('left');
    expect(d('terminated', 'error', ['progress_stalled'])).toBe('terminated');
    expect(d('active', 'terminating', ['heartbeat_timeout'])).toBe('lost');
    expect(d('active', 'terminating', ['progress_stalled'])).toBe('terminating');
    expect(d('active', 'error', ['progress_stalled'])).toBe('stalled');
    expect(d('active', 'error', ['error_persisting', 'dependency_down'])).toBe('error');
    expect(d('active', 'running', ['error_persisting'])).toBe('at_risk');
    expect(d('active', 'idle', ['resource_runaway'])).toBe('at_risk');
    expect(d('active', 'running', [])).toBe('running');
    expect(d('active', 'idle', [])).toBe('idle');
    // Duplicates and order do not matter.
    expect(d('active', 'idle', ['dependency_down', 'dependency_down', 'progress_stalled'])).toBe('stalled');
  });
});

describe('decidingCondition', () => {
  it('names the condition behind lost, stalled and at_risk, and none otherwise', () => {
    expect(decidingCondition('lost', ['progress_stalled', 'heartbeat_timeout'])).toBe('heartbeat_timeout');
    expect(decidingCondition('stalled', ['dependency_down', 'progress_stalled'])).toBe('progress_stalled');
    expect(decidingCondition('at_risk', ['error_persisting', 'dependency_down'])).toBe('dependency_down');
    expect(decidingCondition('at_risk', ['resource_runaway'])).toBe('resource_runaway');
    expect(decidingCondition('error', ['error_persisting'])).toBeNull();
    expect(decidingCondition('running', [])).toBeNull();
    expect(decidingCondition('left', ['heartbeat_timeout'])).toBeNull();
  });
});
