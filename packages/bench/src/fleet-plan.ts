/**
 * The fleet workload's shape: how many monitored agents in which processes, how long each phase
 * runs, and the watchdog policy the coordinator applies to them (written as `policies.yaml` into its
 * data directory before it starts).
 */

export const FLEET_AGENT_TYPE = 'bench-fleet';
export const INTERVAL_MS = 5000;
export const JITTER = 0.1;
export const TIMEOUT_FACTOR = 3;
/** The lease: an agent is lost this long after its last heartbeat. */
export const HEARTBEAT_TIMEOUT_MS = INTERVAL_MS * TIMEOUT_FACTOR;
export const STALL_THRESHOLD_MS = 20_000;
/** What every agent's RSS sits around (plus its own offset up to 64 MiB, ± 1 MiB of noise). */
export const AGENT_RSS_BYTES = 200 * 1024 * 1024;

/**
 * The recovery ladder the fleet runs under (unless `--no-ladder`): a wake for stalled agents, a
 * restart for lost ones (nobody carries it out here: it times out), then an alert rung.
 */
export const FLEET_LADDER_YAML = `    recovery_actions:
      - action: wake
        on_condition: stall_detected
        timeout: 30s
      - action: snapshot_and_restart
        on_condition: heartbeat_timeout
        timeout: 1m
      - action: alert
        on_condition: recovery_failed
`;

/**
 * Stall detection on `metadata.step`; resource limits far above what the agents report (RSS of about
 * 200–265 MiB, flat), so that a healthy agent never trips them; errors only after 5 minutes; the
 * recovery ladder unless `ladder` is false.
 */
export function fleetPolicyYaml(ladder: boolean): string {
  return ladder ? `${FLEET_POLICY_YAML}${FLEET_LADDER_YAML}` : FLEET_POLICY_YAML;
}

const FLEET_POLICY_YAML = `# Written by the bench's fleet workload.
policies:
  - name: bench_fleet
    agent_type: ${FLEET_AGENT_TYPE}
    heartbeat:
      expected_interval: ${INTERVAL_MS / 1000}s
      timeout_factor: ${TIMEOUT_FACTOR}
    stall_detection:
      enabled: true
      progress_field: step
      stall_threshold: ${STALL_THRESHOLD_MS / 1000}s
    resources:
      rss_limit: 8GiB
      rss_growth: 1GiB
    error_timeout: 5m
`;

export interface FleetPlan {
  /** Processes holding the agents that stay healthy throughout. */
  healthyProcesses: number;
  agentsPerHealthyProcess: number;
  /** Agents of the process that is SIGSTOPped (lost detection). */
  lostAgents: number;
  /** Agents of the process whose `step` stops moving (stall detection). */
  stalledAgents: number;
  /** After the last registration, before measuring: every agent has beaten and the beats are spread. */
  warmupMs: number;
  healthyMs: number;
  /** Registrations in flight per process. */
  registerConcurrency: number;
  /** Keep-alive sockets per process for the beats (enough that beats do not queue in the pool). */
  maxSockets: number;
}

export function fleetPlan(quick: boolean): FleetPlan {
  const common = { lostAgents: 100, stalledAgents: 100, registerConcurrency: 4, maxSockets: 64 };
  return quick
    ? { ...common, healthyProcesses: 2, agentsPerHealthyProcess: 400, warmupMs: 6000, healthyMs: 20_000 }
    : { ...common, healthyProcesses: 4, agentsPerHealthyProcess: 2450, warmupMs: 10_000, healthyMs: 120_000 };
}

export function totalAgents(plan: FleetPlan): number {
  return plan.healthyProcesses * plan.agentsPerHealthyProcess + plan.lostAgents + plan.stalledAgents;
}
