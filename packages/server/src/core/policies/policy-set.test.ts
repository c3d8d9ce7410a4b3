import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF } from '../backoff.js';
import { resolveTiming } from '../timing.js';
import { parsePolicies } from './load-policies.js';
import { POLICY_DEFAULTS } from './policy-defaults.js';
import { DEFAULT_POLICY_SET, type PolicySet } from './policy-set.js';
import { DEFAULT_POLICY, type RecoveryAction, rungMatches } from './resolved-policy.js';

function load(text: string): PolicySet {
  const r = parsePolicies(text, 'p.yaml');
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.set;
}

describe('PolicySet.forAgentType', () => {
  const set = load(
    [
      'policies:',
      '  - { name: llm, agent_type: llm_chain, quiet_period: 1m }',
      '  - { name: fallback, agent_type: "*", heartbeat: { expected_interval: 10s } }',
      '  - { name: shell, agent_type: shell }',
    ].join('\n'),
  );
  it('takes the policy naming the type, else the "*" policy', () => {
    expect(set.forAgentType('llm_chain').name).toBe('llm');
    expect(set.forAgentType('shell').name).toBe('shell');
    expect(set.forAgentType('codex').name).toBe('fallback');
    expect(set.forAgentType('codex').heartbeat.expectedIntervalMs).toBe(10_000);
  });
  it('lists the file\'s policies in file order, without the built-in one when "*" is there', () => {
    expect(set.views().map((v) => [v.name, v.agentType])).toEqual([
      ['llm', 'llm_chain'],
      ['fallback', '*'],
      ['shell', 'shell'],
    ]);
  });
  it('without "*", unnamed types get the built-in default, which views() lists last', () => {
    const noStar = load('policies: [{ name: llm, agent_type: llm_chain }]');
    expect(noStar.forAgentType('codex')).toBe(DEFAULT_POLICY);
    expect(noStar.views().at(-1)).toMatchObject({ name: 'default', agentType: '*' });
  });
});

describe('DEFAULT_POLICY_SET', () => {
  it('is the built-in default for every type, from no file', () => {
    expect(DEFAULT_POLICY_SET.source).toBeNull();
    expect(DEFAULT_POLICY_SET.forAgentType('anything')).toBe(DEFAULT_POLICY);
    expect(DEFAULT_POLICY_SET.taskTypeDefaults('anything')).toBeUndefined();
    expect(DEFAULT_POLICY_SET.channels.size).toBe(0);
    expect(DEFAULT_POLICY_SET.views()).toHaveLength(1);
  });
  it('the built-in policy has the documented defaults (docs/design.md §4 timing)', () => {
    expect(DEFAULT_POLICY).toEqual({
      name: 'default',
      agentType: '*',
      heartbeat: {
        expectedIntervalMs: 5000,
        timeoutFactor: 3,
        adaptive: false,
        phiThreshold: 8,
        minTimeoutMs: 10_000,
      },
      startupTimeoutMs: 30_000,
      quietPeriodMs: 0,
      forMs: 0,
      stallDetection: { enabled: true, progressField: null, stallThresholdMs: 300_000 },
      resources: { ...POLICY_DEFAULTS.resources },
      errorTimeoutMs: 300_000,
      dependencies: [],
      recoveryActions: [],
    });
  });
  it('derives min_timeout (2 intervals, capped at the timeout) and startup_timeout (≥ the timeout)', () => {
    const set = load(
      [
        'policies:',
        '  - { name: tight, agent_type: a, heartbeat: { expected_interval: 10s, timeout_factor: 1.5 } }',
        '  - { name: slow, agent_type: b, heartbeat: { expected_interval: 1m } }',
      ].join('\n'),
    );
    expect(set.forAgentType('a').heartbeat.minTimeoutMs).toBe(15_000);
    expect(set.forAgentType('a').startupTimeoutMs).toBe(30_000);
    expect(set.forAgentType('b').heartbeat.minTimeoutMs).toBe(120_000);
    expect(set.forAgentType('b').startupTimeoutMs).toBe(180_000);
  });
});

describe('PolicySet.taskTypeDefaults', () => {
  const set = load(
    [
      'task_types:',
      '  review:',
      '    heartbeat_interval: 2s',
      '    timeout_factor: 4',
      '    claim_timeout: 1m',
      '    execution_timeout: 10m',
      '    stall_timeout: 2m',
      '    max_attempts: 6',
      '    backoff: { base: 500ms, jitter: 0.2 }',
      '  scan:',
      '    expected_duration: { min: 5, max: 300 }',
    ].join('\n'),
  );
  it('gives the timing input in ms, attempts and backoff, for the types the file names', () => {
    expect(set.taskTypeDefaults('review')).toEqual({
      timing: {
        heartbeatIntervalMs: 2000,
        timeoutFactor: 4,
        claimTimeoutMs: 60_000,
        executionTimeoutMs: 600_000,
        stallTimeoutMs: 120_000,
      },
      maxAttempts: 6,
      backoff: { baseMs: 500, capMs: DEFAULT_BACKOFF.capMs, jitter: 0.2 },
    });
    expect(set.taskTypeDefaults('scan')).toEqual({
      timing: { expectedDurationMs: { min: 5000, max: 300_000 } },
    });
    expect(set.taskTypeDefaults('other')).toBeUndefined();
  });
  it('resolves like a task created with that timing (the field example: interval 1 s from min 5 s)', () => {
    const timing = resolveTiming(set.taskTypeDefaults('scan')!.timing);
    expect(timing).toMatchObject({ heartbeatIntervalMs: 1000, executionTimeoutMs: 450_000 });
  });
  it('has a wire form', () => {
    expect(set.taskTypeViews()).toEqual({
      review: {
        timing: {
          heartbeatIntervalMs: 2000,
          timeoutFactor: 4,
          claimTimeoutMs: 60_000,
          executionTimeoutMs: 600_000,
          stallTimeoutMs: 120_000,
        },
        maxAttempts: 6,
        backoff: { baseMs: 500, capMs: 300_000, jitter: 0.2 },
      },
      scan: { timing: { expectedDurationMs: { min: 5000, max: 300_000 } } },
    });
  });
});

describe('rungMatches', () => {
  const rung = (onCondition: RecoveryAction['onCondition']): RecoveryAction => ({
    action: 'wake',
    onCondition,
    maxAttempts: 1,
    windowMs: null,
    timeoutMs: 60_000,
  });
  it('stall_detected is progress_stalled; any is every condition but recovery_failed', () => {
    expect(rungMatches(rung('stall_detected'), 'progress_stalled')).toBe(true);
    expect(rungMatches(rung('stall_detected'), 'heartbeat_timeout')).toBe(false);
    expect(rungMatches(rung('any'), 'dependency_down')).toBe(true);
    expect(rungMatches(rung('any'), 'recovery_failed')).toBe(false);
    expect(rungMatches(rung('recovery_failed'), 'recovery_failed')).toBe(true);
    expect(rungMatches(rung('heartbeat_timeout'), 'heartbeat_timeout')).toBe(true);
    expect(rungMatches(rung('heartbeat_timeout'), 'progress_stalled')).toBe(false);
  });
});
