/**
 * The fleet workload's agent processes (`fleet-agents.ts`): start them, wait for their agents to be
 * registered, ask them for reports, and make sure none outlives the workload.
 */
import { type ChildMessage, type JsonChild, spawnJsonChild } from './child.js';
import type { FleetAgentsConfig } from './fleet-agents.js';
import { AGENT_RSS_BYTES, FLEET_AGENT_TYPE, type FleetPlan, INTERVAL_MS, JITTER } from './fleet-plan.js';

export type FleetRole = 'healthy' | 'lost' | 'stalled';

export interface FleetProcess {
  readonly name: string;
  readonly role: FleetRole;
  readonly child: JsonChild;
  /** Its agents' ids, once registered. */
  agentIds: string[];
  /** Set once it was sent SIGSTOP (it answers nothing until it is killed). */
  stopped: boolean;
}

/** Per-request latencies and outcomes one process reported for the measured phase. */
export interface BeatReport {
  sent: number;
  ok: number;
  errors: number;
  firstErrors: string[];
  latenciesMs: number[];
}

/** Spawn the processes of `plan` against the coordinator at `url`. */
export function spawnFleet(url: string, enrollToken: string, plan: FleetPlan): FleetProcess[] {
  const roles: [string, FleetRole, number][] = [
    ...Array.from(
      { length: plan.healthyProcesses },
      (_, i) => [`healthy-${i}`, 'healthy', plan.agentsPerHealthyProcess] as [string, FleetRole, number],
    ),
    ['lost', 'lost', plan.lostAgents],
    ['stalled', 'stalled', plan.stalledAgents],
  ];
  return roles.map(([name, role, count]) => {
    const config: FleetAgentsConfig = {
      url,
      token: enrollToken,
      agentType: FLEET_AGENT_TYPE,
      count,
      keyPrefix: `bench-fleet/${name}/`,
      intervalMs: INTERVAL_MS,
      jitter: JITTER,
      registerConcurrency: plan.registerConcurrency,
      maxSockets: plan.maxSockets,
      rssBytes: AGENT_RSS_BYTES,
    };
    return { name, role, child: spawnJsonChild('fleet-agents', config), agentIds: [], stopped: false };
  });
}

/** The next message of `type` after this call (earlier ones do not count). */
export function nextMessage(p: FleetProcess, type: string, timeoutMs: number): Promise<ChildMessage> {
  const from = p.child.messages.length;
  return p.child.waitFor((m) => m.type === type && p.child.messages.indexOf(m) >= from, timeoutMs);
}

/** Send `command` and wait for the answer of `type`. */
export async function ask(
  p: FleetProcess,
  command: string,
  type: string,
  timeoutMs = 30_000,
): Promise<ChildMessage> {
  const answer = nextMessage(p, type, timeoutMs);
  p.child.send(command);
  try {
    return await answer;
  } catch (err) {
    throw new Error(`fleet process ${p.name} did not answer ${command}: ${String(err)}`);
  }
}

/** How many agents each process has registered so far (from its progress messages). */
function registeredSoFar(p: FleetProcess): number {
  let done = 0;
  for (const m of p.child.messages) {
    if (m.type === 'registering') done = m.done as number;
    else if (m.type === 'registered') done = (m.agentIds as string[]).length;
  }
  return done;
}

/**
 * Wait until every process registered all its agents (logging the progress every 10 s); throws
 * naming how far each process got.
 */
export async function awaitRegistered(
  procs: FleetProcess[],
  timeoutMs: number,
  log: (m: string) => void,
): Promise<{ ms: number; registerMs: number[] }> {
  const started = performance.now();
  const registerMs: number[] = [];
  const progress = () => procs.map((p) => `${p.name} ${registeredSoFar(p)}`).join(', ');
  const ticker = setInterval(() => log(`fleet: registered so far: ${progress()}`), 10_000);
  try {
    await Promise.all(
      procs.map(async (p) => {
        let m: ChildMessage;
        try {
          m = await p.child.waitFor((x) => x.type === 'registered', timeoutMs);
        } catch (err) {
          throw new Error(
            `fleet process ${p.name} did not register its agents within ${timeoutMs} ms (registered so far: ${progress()}): ${String(err)}`,
          );
        }
        if ((m.rejected as number) > 0) {
          throw new Error(
            `fleet process ${p.name}: ${m.rejected} registrations failed, first: ${JSON.stringify(m.firstErrors)}`,
          );
        }
        p.agentIds = m.agentIds as string[];
        for (const ms of m.registerMs as number[]) registerMs.push(ms);
      }),
    );
  } finally {
    clearInterval(ticker);
  }
  return { ms: performance.now() - started, registerMs };
}

/** Ask every (running) process for its report of the measured phase. */
export async function collectReports(procs: FleetProcess[]): Promise<BeatReport[]> {
  const answers = await Promise.all(procs.filter((p) => !p.stopped).map((p) => ask(p, 'report', 'report')));
  return answers.map((m) => m as unknown as BeatReport);
}

/** When each agent's last heartbeat was acknowledged, by agent id, and when the process answered. */
export async function lastAcks(p: FleetProcess): Promise<{ at: number; acks: Map<string, number | null> }> {
  const m = await ask(p, 'last', 'last');
  return { at: m.at as number, acks: new Map(m.agents as [string, number | null][]) };
}

/**
 * Stop every process and wait for it to exit: `stop` to the running ones (SIGKILL after a grace),
 * SIGKILL to a stopped one (a SIGSTOPped process takes SIGKILL as it is).
 */
export async function stopFleet(procs: FleetProcess[]): Promise<void> {
  await Promise.all(
    procs.map(async (p) => {
      if (p.stopped) p.child.kill('SIGKILL');
      else p.child.send('stop');
      const timer = setTimeout(() => p.child.kill('SIGKILL'), 5000);
      await p.child.exited;
      clearTimeout(timer);
    }),
  );
}
