/**
 * The watchdog act of `rouse demo` (`--act watchdog`): four agent programs under `rouse supervise`,
 * each failing its own way, and the policy file whose ladders recover them. Timings are short (a
 * heartbeat every 300 ms, stalled after 1.5 s) so the whole act takes well under a minute.
 */
import { fileURLToPath } from 'node:url';

/** The four programs, in the order they are introduced (program name = agent type). */
export const WATCHDOG_AGENTS = [
  {
    program: 'staller',
    story:
      'stops making progress at step 6      → stalled; the ladder sends SIGUSR1 (a wake) → it moves again',
  },
  {
    program: 'hanger',
    story:
      'freezes at step 7 (SIGSTOP)          → heartbeat timeout → snapshot_and_restart → resumes from its snapshot',
  },
  {
    program: 'leaker',
    story: 'leaks 8 MiB a step past rss_limit    → resource runaway → restarted; leaks again → terminated',
  },
  {
    program: 'api-user',
    story:
      'llm-api answers 429 (rate-limited)   → its restart is held, one dependency_down alert; moves again when llm-api is back',
  },
] as const;

export type WatchdogProgram = (typeof WATCHDOG_AGENTS)[number]['program'];

export const WATCHDOG_TIMING = {
  heartbeatMs: 300,
  timeoutFactor: 3,
  stallThresholdMs: 1500,
  signalTimeoutMs: 2000,
  restartTimeoutMs: 10_000,
  rssLimitMiB: 192,
} as const;

/** The policy file of the act: a ladder per agent type, alerts to the demo's own webhook. */
export function watchdogPolicies(webhookUrl: string): string {
  const t = WATCHDOG_TIMING;
  const common = (name: string, type: string) => `  - name: ${name}
    agent_type: ${type}
    heartbeat: { expected_interval: ${t.heartbeatMs}ms, timeout_factor: ${t.timeoutFactor} }
    stall_detection: { progress_field: step, stall_threshold: ${t.stallThresholdMs}ms }`;
  return `# Written by rouse demo --act watchdog.
channels:
  demo: { type: webhook, url: "${webhookUrl}" }
alerts: { group_wait: 0s, group_interval: 1s, repeat_interval: 1h, escalate_after: null }
policies:
${common('demo_staller', 'staller')}
    recovery_actions:
      - { action: send_signal, signal: SIGUSR1, on_condition: stall_detected, max_attempts: 2, timeout: ${t.signalTimeoutMs}ms }
      - { action: alert, on_condition: recovery_failed, severity: high }
${common('demo_hanger', 'hanger')}
    recovery_actions:
      - { action: snapshot_and_restart, on_condition: heartbeat_timeout, timeout: ${t.restartTimeoutMs}ms }
      - { action: alert, on_condition: recovery_failed, severity: high }
${common('demo_leaker', 'leaker')}
    resources: { rss_limit: ${t.rssLimitMiB}MiB }
    recovery_actions:
      - { action: snapshot_and_restart, on_condition: resource_runaway, max_attempts: 1, window: 5m, timeout: ${t.restartTimeoutMs}ms }
      - { action: terminate, on_condition: resource_runaway, grace: 1s, timeout: 5s }
      - { action: alert, on_condition: recovery_failed, severity: high }
${common('demo_api_user', 'api-user')}
    dependencies: [llm-api]
    recovery_actions:
      - { action: alert, on_condition: dependency_down, severity: high }
      - { action: snapshot_and_restart, on_condition: stall_detected, timeout: ${t.restartTimeoutMs}ms }
      - { action: alert, on_condition: recovery_failed, severity: high }
`;
}

/** The agent programs shipped with the CLI (compiled next to this file). */
export function agentProgram(program: WatchdogProgram): string {
  return fileURLToPath(new URL(`./agents/${program}.js`, import.meta.url));
}

/** The `rouse` entry of this package, to run `rouse supervise` with. */
export function rouseBin(): string {
  return fileURLToPath(new URL('../../../bin/rouse.js', import.meta.url));
}

/** The host config `rouse supervise -c` runs: the four programs, agent keys `demo-host/<program>-1`. */
export function watchdogHostConfig(opts: { node: string; eventsFile: string; llmApiUrl: string }): string {
  const q = JSON.stringify;
  const programs = WATCHDOG_AGENTS.map(
    ({ program }) => `  - name: ${program}
    command: [${q(opts.node)}, ${q(agentProgram(program))}]
    env: { ROUSE_DEMO_EVENTS: ${q(opts.eventsFile)}, LLM_API_URL: ${q(opts.llmApiUrl)} }
    restart: { backoff: 100ms, max_backoff: 1s, budget: 5, window: 1m }
    stop: { signal: SIGTERM, grace: 1s }
    wake_signal: SIGUSR1`,
  ).join('\n');
  return `# Written by rouse demo --act watchdog.
name: demo-host
programs:
${programs}
`;
}
