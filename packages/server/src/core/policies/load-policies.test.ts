import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parsePolicies } from './load-policies.js';

const FILE = 'rouse.yaml';
const yaml = (...lines: string[]) => `${lines.join('\n')}\n`;

/** A minimal valid policy's first lines, to add fields under (lines 1–3). */
const HEAD = ['policies:', '  - name: reviewers', '    agent_type: llm_chain'];

describe('parsePolicies: the docs/design.md example (§6.3 verbatim, with the §6.7 channels and alerts)', () => {
  const text = readFileSync(new URL('./fixtures/design-example.yaml', import.meta.url), 'utf8');

  it('loads and resolves to the expected numbers', () => {
    const r = parsePolicies(text, FILE);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    const p = r.set.forAgentType('llm_chain');
    expect(p.name).toBe('default_llm_agent_policy');
    expect(p.heartbeat).toEqual({
      expectedIntervalMs: 30_000,
      timeoutFactor: 3,
      adaptive: false,
      phiThreshold: 8,
      minTimeoutMs: 60_000,
    });
    expect(p.startupTimeoutMs).toBe(90_000); // max(30 s, 3 × 30 s)
    expect(p.stallDetection).toEqual({
      enabled: true,
      progressField: 'step_progress',
      stallThresholdMs: 300_000,
    });
    expect(p.errorTimeoutMs).toBe(300_000);
    expect(p.recoveryActions).toEqual([
      {
        action: 'send_signal',
        signal: 'SIGUSR1',
        onCondition: 'stall_detected',
        maxAttempts: 2,
        windowMs: null,
        timeoutMs: 60_000,
      },
      {
        action: 'snapshot_and_restart',
        onCondition: 'heartbeat_timeout',
        snapshotTtlMs: 3_600_000,
        maxAttempts: 1,
        windowMs: null,
        timeoutMs: 300_000,
      },
      {
        action: 'alert',
        channels: ['slack', 'email'],
        onCondition: 'recovery_failed',
        severity: 'high',
        maxAttempts: 1,
        windowMs: null,
        timeoutMs: 60_000,
      },
    ]);
    expect(r.set.source).toBe(FILE);
    expect([...r.set.channels.keys()]).toEqual(['ops', 'slack', 'email']);
    expect(r.set.channels.get('email')).toEqual({
      type: 'email',
      smtp: { host: 'smtp.example', port: 587, secure: false, userEnv: null, passwordEnv: null },
      from: 'rouse@example',
      to: ['oncall@example'],
    });
    expect(r.set.channels.get('ops')).toEqual({
      type: 'webhook',
      url: 'https://ops.example/hook',
      secretEnv: 'OPS_HOOK_SECRET',
    });
    expect(r.set.alerts).toEqual({
      groupWaitMs: 30_000,
      groupIntervalMs: 300_000,
      repeatIntervalMs: 14_400_000,
      escalateAfterMs: 900_000,
    });
    // Every other agent type gets the built-in default.
    expect(r.set.forAgentType('shell').name).toBe('default');
    expect(r.set.views().map((v) => v.name)).toEqual(['default_llm_agent_policy', 'default']);
  });
});

describe('parsePolicies: units and defaults', () => {
  it('takes units everywhere a duration or size goes, and null for "off"', () => {
    const r = parsePolicies(
      yaml(
        ...HEAD,
        '    heartbeat: { expected_interval: 500ms, timeout_factor: 4, adaptive: true, phi_threshold: 12, min_timeout: 1.5s }',
        '    startup_timeout: 1m',
        '    quiet_period: 2m',
        '    for: 10s',
        '    stall_detection: { enabled: false, stall_threshold: 1h }',
        '    resources:',
        '      rss_limit: 4GiB',
        '      rss_growth: 50MiB/min',
        '      rss_window: 15m',
        '      min_fit: 0.9',
        '      cpu_percent: 95',
        '      cpu_window: 1d',
        '      iteration_factor: 3',
        '      max_iteration: 90',
        '      min_baseline_samples: 50',
        '    error_timeout: null',
        '    dependencies: [openai, github, openai]',
        '    recovery_actions:',
        '      - { action: terminate, on_condition: any, grace: 30s, window: 1h, max_attempts: 3, timeout: 2m }',
      ),
      FILE,
    );
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    const p = r.set.forAgentType('llm_chain');
    expect(p.heartbeat).toEqual({
      expectedIntervalMs: 500,
      timeoutFactor: 4,
      adaptive: true,
      phiThreshold: 12,
      minTimeoutMs: 1500,
    });
    expect([p.startupTimeoutMs, p.quietPeriodMs, p.forMs]).toEqual([60_000, 120_000, 10_000]);
    expect(p.stallDetection).toEqual({ enabled: false, progressField: null, stallThresholdMs: 3_600_000 });
    expect(p.resources).toEqual({
      rssLimitBytes: 4 * 1024 ** 3,
      rssGrowthBytesPerMin: 50 * 1024 ** 2,
      rssWindowMs: 900_000,
      minFit: 0.9,
      cpuPercent: 95,
      cpuWindowMs: 86_400_000,
      iterationFactor: 3,
      maxIterationMs: 90_000,
      minBaselineSamples: 50,
    });
    expect(p.errorTimeoutMs).toBeNull();
    expect(p.dependencies).toEqual(['openai', 'github']);
    expect(p.recoveryActions).toEqual([
      {
        action: 'terminate',
        onCondition: 'any',
        graceMs: 30_000,
        windowMs: 3_600_000,
        maxAttempts: 3,
        timeoutMs: 120_000,
      },
    ]);
  });

  it('error_timeout: 0 also turns error_persisting off', () => {
    const r = parsePolicies(yaml(...HEAD, '    error_timeout: 0'), FILE);
    expect(r.ok && r.set.forAgentType('llm_chain').errorTimeoutMs).toBeNull();
  });

  it('an alert rung without channels alerts through every channel the file defines', () => {
    const r = parsePolicies(
      yaml(
        ...HEAD,
        '    recovery_actions: [{ action: alert, on_condition: recovery_failed }]',
        'channels:',
        '  a: { type: slack, webhook_url: "https://hooks.example/a" }',
        '  b: { type: webhook, url: "http://127.0.0.1:9/x" }',
      ),
      FILE,
    );
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.set.forAgentType('llm_chain').recoveryActions[0]).toMatchObject({
      channels: ['a', 'b'],
      severity: 'medium',
    });
  });

  it('"policies: []" and "{}" are the built-in defaults, explicitly', () => {
    for (const text of ['policies: []\n', '{}\n']) {
      const r = parsePolicies(text, FILE);
      if (!r.ok) throw new Error(JSON.stringify(r.errors));
      expect(r.set.views().map((v) => v.name)).toEqual(['default']);
    }
  });
});
