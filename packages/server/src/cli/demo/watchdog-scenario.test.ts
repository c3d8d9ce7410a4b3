/**
 * The watchdog act's files: the policy file it writes loads (a ladder per agent type, the demo's
 * webhook as the only channel), and the host config `rouse supervise` gets is valid and runs the four
 * shipped programs with the events file and the model API's URL.
 */
import { parseHostConfig } from '@rouse/agent-host';
import { describe, expect, it } from 'vitest';
import { parsePolicies } from '../../core/policies/load-policies.js';
import { WATCHDOG_AGENTS, watchdogHostConfig, watchdogPolicies } from './watchdog-scenario.js';

describe('the watchdog act', () => {
  it('writes a policy file that loads, with the ladder each agent is meant to climb', () => {
    const parsed = parsePolicies(watchdogPolicies('http://127.0.0.1:4321/alerts'), 'policies.yaml');
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    const ladder = (type: string) =>
      parsed.set.forAgentType(type).recoveryActions.map((r) => `${r.onCondition}:${r.action}`);
    for (const { program } of WATCHDOG_AGENTS) {
      const p = parsed.set.forAgentType(program);
      expect(p.agentType).toBe(program);
      expect(p.heartbeat).toMatchObject({ expectedIntervalMs: 300, timeoutFactor: 3 });
      expect(p.stallDetection).toMatchObject({ progressField: 'step', stallThresholdMs: 1500 });
    }
    expect(ladder('staller')).toEqual(['stall_detected:send_signal', 'recovery_failed:alert']);
    expect(ladder('hanger')).toEqual(['heartbeat_timeout:snapshot_and_restart', 'recovery_failed:alert']);
    expect(ladder('leaker')).toEqual([
      'resource_runaway:snapshot_and_restart',
      'resource_runaway:terminate',
      'recovery_failed:alert',
    ]);
    expect(parsed.set.forAgentType('leaker').resources.rssLimitBytes).toBe(192 * 1024 * 1024);
    expect(ladder('api-user')).toEqual([
      'dependency_down:alert',
      'stall_detected:snapshot_and_restart',
      'recovery_failed:alert',
    ]);
    expect(parsed.set.forAgentType('api-user').dependencies).toEqual(['llm-api']);
  });

  it('writes a host config rouse supervise accepts, one instance of each program', () => {
    const text = watchdogHostConfig({
      node: '/usr/bin/node',
      eventsFile: '/tmp/demo dir/agent-events.jsonl',
      llmApiUrl: 'http://127.0.0.1:4321/llm',
    });
    const config = parseHostConfig(text, 'host.yaml', {
      ROUSE_URL: 'http://127.0.0.1:7070',
      ROUSE_AGENT_TOKEN: 'enroll',
    });
    expect(config.name).toBe('demo-host');
    expect(config.programs.map((p) => p.name)).toEqual(WATCHDOG_AGENTS.map((a) => a.program));
    for (const p of config.programs) {
      expect(p).toMatchObject({ agentType: p.name, instances: 1, wakeSignal: 'SIGUSR1' });
      expect(p.env).toMatchObject({
        ROUSE_DEMO_EVENTS: '/tmp/demo dir/agent-events.jsonl',
        LLM_API_URL: 'http://127.0.0.1:4321/llm',
      });
    }
  });
});
