/**
 * Child-process entry point for the fleet workload: `count` monitored agents (no tasks, no SDK — a
 * compact raw client over one keep-alive pool, so what we measure is the coordinator). Each agent
 * registers (a few at a time across the process), then heartbeats every `intervalMs` ± `jitter`
 * with status `running`, metrics (an RSS that holds steady with a little noise, CPU, iteration time)
 * and `metadata: {step}` where `step` moves on every beat — until `freeze`, after which it keeps
 * beating with the same `step` (a stalled agent). An agent sends its next beat only once its last
 * one was answered.
 *
 * argv[2]: JSON `FleetAgentsConfig`. stdout messages (one JSON line each):
 * - `{type: 'registering', done}` every 250 registrations;
 * - `{type: 'registered', agentIds, ms, registerMs, rejected}` once every agent is registered
 *   (`registerMs`: each registration's latency; `rejected`: how many failed, they are not retried);
 * - `{type: 'report', sent, ok, errors, firstErrors, latenciesMs}` after `report`: the heartbeats sent
 *   since `measure` (each request's latency, ms, from sending to the last byte of the answer);
 * - `{type: 'last', at, agents: [[agentId, lastOkAt | null], …]}` after `last`: when each agent's
 *   last heartbeat was acknowledged (epoch ms, this machine's clock);
 * - `{type: 'frozen', at}` after `freeze`.
 * stdin commands: `measure`, `report`, `last`, `freeze`, `stop`.
 */

import { createInterface } from 'node:readline';
import type { AgentHeartbeatRequest, RegisterAgentResponse } from '@rouse/protocol';
import { HttpClient } from './http-client.js';

export interface FleetAgentsConfig {
  url: string;
  /** Enrollment token. */
  token: string;
  agentType: string;
  count: number;
  /** Agent keys are `<keyPrefix><i>`. */
  keyPrefix: string;
  intervalMs: number;
  /** Each gap is `intervalMs × (1 ± jitter)`, uniform. */
  jitter: number;
  /** Registrations in flight at once. */
  registerConcurrency: number;
  /** Sockets in the keep-alive pool. */
  maxSockets: number;
  /** The RSS every agent reports sits around this (each its own offset, ± noise). */
  rssBytes: number;
}

interface FleetAgent {
  id: string;
  path: string;
  token: string;
  step: number;
  rssBytes: number;
  lastOkAt: number | null;
}

const MAX_ERRORS_KEPT = 5;
const PROGRESS_EVERY = 250;

function emit(message: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as FleetAgentsConfig;
  const http = new HttpClient({ url: config.url, token: config.token, maxSockets: config.maxSockets });
  // Registrations have their own sockets: they must not queue behind the beats of the agents
  // registered before them (each real agent has its own connection).
  const enroll = new HttpClient({
    url: config.url,
    token: config.token,
    maxSockets: config.registerConcurrency,
  });
  const agents: FleetAgent[] = [];
  let stopping = false;
  let frozen = false;
  let measuring = false;
  let latencies: number[] = [];
  let sent = 0;
  let ok = 0;
  let errors = 0;
  let firstErrors: string[] = [];

  const gap = () => config.intervalMs * (1 + config.jitter * (2 * Math.random() - 1));

  async function beat(agent: FleetAgent): Promise<void> {
    if (!frozen) agent.step++;
    const body: AgentHeartbeatRequest = {
      status: 'running',
      metrics: {
        rssBytes: Math.round(agent.rssBytes + (Math.random() - 0.5) * 2 * 1024 * 1024),
        cpuPercent: Math.round((2 + Math.random() * 6) * 10) / 10,
        iterationMs: Math.round(150 + Math.random() * 100),
      },
      metadata: { step: agent.step },
    };
    const recorded = measuring;
    const started = performance.now();
    try {
      await http.post(agent.path, body, { token: agent.token, parse: false });
      agent.lastOkAt = Date.now();
      if (recorded && measuring) {
        latencies.push(performance.now() - started);
        sent++;
        ok++;
      }
    } catch (err) {
      if (recorded && measuring) {
        sent++;
        errors++;
        if (firstErrors.length < MAX_ERRORS_KEPT) firstErrors.push(String(err).slice(0, 300));
      }
    }
  }

  /** Beat on a schedule: each due time one jittered gap after the last, never before the last beat was answered. */
  function run(agent: FleetAgent, due: number): void {
    setTimeout(
      () => {
        if (stopping) return;
        void beat(agent).then(() => run(agent, Math.max(due + gap(), performance.now())));
      },
      Math.max(0, due - performance.now()),
    );
  }

  const commands = createInterface({ input: process.stdin });
  // The bench went away (its end of stdin closed): no agent outlives it.
  commands.on('close', () => process.exit(0));
  commands.on('line', (line) => {
    const command = line.trim();
    if (command === 'measure') {
      latencies = [];
      sent = ok = errors = 0;
      firstErrors = [];
      measuring = true;
    } else if (command === 'report') {
      measuring = false;
      emit({
        type: 'report',
        sent,
        ok,
        errors,
        firstErrors,
        latenciesMs: latencies.map((ms) => Math.round(ms * 1000) / 1000),
      });
    } else if (command === 'last') {
      emit({ type: 'last', at: Date.now(), agents: agents.map((a) => [a.id, a.lastOkAt]) });
    } else if (command === 'freeze') {
      frozen = true;
      emit({ type: 'frozen', at: Date.now() });
    } else if (command === 'stop') {
      stopping = true;
      http.close();
      process.exit(0);
    }
  });

  // Register a few at a time; each agent starts beating at a random point of its first interval.
  const started = performance.now();
  let next = 0;
  let rejected = 0;
  const registerMs: number[] = [];
  const lanes = Array.from({ length: Math.min(config.registerConcurrency, config.count) }, async () => {
    while (next < config.count && !stopping) {
      const i = next++;
      try {
        const sentAt = performance.now();
        const reg = await enroll.post<RegisterAgentResponse>('/v1/agents', {
          agentType: config.agentType,
          key: `${config.keyPrefix}${i}`,
          name: `${config.keyPrefix}${i}`,
          pid: process.pid,
        });
        registerMs.push(performance.now() - sentAt);
        const agent: FleetAgent = {
          id: reg.agent.id,
          path: `/v1/agents/${reg.agent.id}/heartbeat`,
          token: reg.token,
          step: 0,
          rssBytes: config.rssBytes + Math.round(Math.random() * 64) * 1024 * 1024,
          lastOkAt: null,
        };
        agents.push(agent);
        run(agent, performance.now() + Math.random() * config.intervalMs);
        if (agents.length % PROGRESS_EVERY === 0) emit({ type: 'registering', done: agents.length });
      } catch (err) {
        rejected++;
        if (firstErrors.length < MAX_ERRORS_KEPT) firstErrors.push(String(err).slice(0, 300));
      }
    }
  });
  await Promise.all(lanes);
  enroll.close();
  emit({
    type: 'registered',
    agentIds: agents.map((a) => a.id),
    ms: Math.round(performance.now() - started),
    registerMs: registerMs.map((ms) => Math.round(ms * 10) / 10),
    rejected,
    ...(rejected > 0 ? { firstErrors } : {}),
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`fleet-agents: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
