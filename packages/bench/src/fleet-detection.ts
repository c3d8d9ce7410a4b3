/**
 * The fleet workload's detection phases, with the rest of the fleet beating on:
 * - lost: the process of the "lost" agents gets a real SIGSTOP; for each of its agents, how long
 *   after its lease ran out (`lastHeartbeatAt + timeoutMs`) the coordinator opened
 *   `heartbeat_timeout` (the condition's `since`, the store clock when it marked the agent lost);
 * - stalled: the process of the "stalled" agents keeps beating but stops moving `step`; for each,
 *   how long after `progressChangedAt + stall threshold` `progress_stalled` opened. The detector
 *   gives a stall's `since` as that due time itself, so the time it actually opened comes from the
 *   coordinator's `agent.condition` event (its `at`, the coordinator clock after the write).
 * Agents are read from `GET /v1/agents?status=…` (filtered in the store). Polling starts only once every expected condition
 * is due (plus a margin): the listing reads every agent of the store, and must not delay the timers
 * it measures.
 */
import type { Agent, AgentCondition, ConditionKind, ListAgentsResponse, StreamEvent } from '@rouse/protocol';
import { HEARTBEAT_TIMEOUT_MS, STALL_THRESHOLD_MS } from './fleet-plan.js';
import { ask, type FleetProcess, lastAcks } from './fleet-processes.js';
import type { HttpClient } from './http-client.js';
import { monotonicUs, type ProfileWindow } from './profile-summary.js';
import { round, roundSummary, type Summary, summarize } from './stats.js';
import { sleep } from './tasks.js';

/** After the last expected due time, before the first listing. */
const POLL_MARGIN_MS = 1500;
const POLL_EVERY_MS = 1000;
/** How long past the last due time we wait for every condition before giving up. */
const POLL_BOUND_MS = 30_000;

/** `agent.condition` opened events by `<agentId> <condition>`: when the coordinator published them. */
export class OpenedConditions {
  readonly #at = new Map<string, number>();

  onEvent = (event: StreamEvent): void => {
    if (event.type !== 'agent.condition' || event.state !== 'opened') return;
    const key = `${event.agentId} ${event.condition.condition}`;
    if (!this.#at.has(key)) this.#at.set(key, event.at);
  };

  at(agentId: string, condition: ConditionKind): number | undefined {
    return this.#at.get(`${agentId} ${condition}`);
  }
}

export interface DetectionResult {
  /** The excess the target judges, per agent (ms). */
  excessMs: Summary;
  /** Opened (event `at`) − due, per agent that had an event (ms). */
  openedExcessMs: Summary | null;
  /** Agents in this status that were not in the group (healthy agents caught by mistake). */
  others: number;
  /** From the signal/freeze to the listing that showed every agent of the group. */
  allSeenAfterMs: number;
  window: ProfileWindow;
  details: Record<string, unknown>;
}

interface Listing {
  agents: Agent[];
  ms: number;
}

async function listByStatus(admin: HttpClient, status: string): Promise<Listing> {
  const t = performance.now();
  const res = await admin.get<ListAgentsResponse>(`/v1/agents?status=${status}&limit=10000`);
  return { agents: res.agents, ms: performance.now() - t };
}

/** Poll `status` from `firstAt` (epoch ms) until every agent of `group` shows it, bounded. */
async function pollUntilAll(
  admin: HttpClient,
  status: string,
  group: ReadonlySet<string>,
  firstAt: number,
): Promise<{ listing: Listing; polls: number[] }> {
  await sleep(Math.max(0, firstAt - Date.now()));
  const deadline = firstAt + POLL_BOUND_MS;
  const polls: number[] = [];
  for (;;) {
    const listing = await listByStatus(admin, status);
    polls.push(round(listing.ms, 1));
    const seen = listing.agents.filter((a) => group.has(a.id)).length;
    if (seen === group.size) return { listing, polls };
    if (Date.now() > deadline) {
      throw new Error(
        `only ${seen} of ${group.size} agents were ${status} ${POLL_BOUND_MS} ms after they were all due`,
      );
    }
    await sleep(POLL_EVERY_MS);
  }
}

function conditionOf(agent: Agent, kind: ConditionKind): AgentCondition {
  const c = agent.conditions.find((x) => x.condition === kind);
  if (c === undefined) throw new Error(`agent ${agent.id} is ${agent.status} without a ${kind} condition`);
  return c;
}

function num(value: unknown, what: string): number {
  if (typeof value !== 'number') throw new Error(`${what} is not a number: ${JSON.stringify(value)}`);
  return value;
}

/** SIGSTOP the lost process and measure when its agents are lost. */
export async function measureLost(
  admin: HttpClient,
  proc: FleetProcess,
  opened: OpenedConditions,
  log: (m: string) => void,
): Promise<DetectionResult> {
  const group = new Set(proc.agentIds);
  // The client's last acknowledgements, just before the stop (a beat may still be in flight).
  const { acks } = await lastAcks(proc);
  proc.child.kill('SIGSTOP');
  proc.stopped = true;
  const stoppedAt = Date.now();
  const fromUs = monotonicUs();
  log(
    `fleet: SIGSTOP to ${group.size} agents (pid ${proc.child.pid}); leases run out within ${HEARTBEAT_TIMEOUT_MS} ms`,
  );
  const { listing, polls } = await pollUntilAll(
    admin,
    'lost',
    group,
    stoppedAt + HEARTBEAT_TIMEOUT_MS + POLL_MARGIN_MS,
  );
  const allSeenAfterMs = Date.now() - stoppedAt;
  const window = { fromUs, toUs: monotonicUs() };
  const excess: number[] = [];
  const leaseExcess: number[] = [];
  const eventLag: number[] = [];
  let beatAfterLastAck = 0;
  for (const agent of listing.agents.filter((a) => group.has(a.id))) {
    const c = conditionOf(agent, 'heartbeat_timeout');
    const last = num(agent.lastHeartbeatAt, `agent ${agent.id} lastHeartbeatAt`);
    const timeoutMs = num(c.evidence.timeoutMs, `agent ${agent.id} heartbeat_timeout evidence.timeoutMs`);
    excess.push(c.since - (last + timeoutMs));
    leaseExcess.push(c.since - num(c.evidence.leaseExpiresAt, 'evidence.leaseExpiresAt'));
    const at = opened.at(agent.id, 'heartbeat_timeout');
    if (at !== undefined) eventLag.push(at - c.since);
    const ack = acks.get(agent.id);
    if (ack !== undefined && ack !== null && last > ack) beatAfterLastAck++;
  }
  const others = listing.agents.length - group.size;
  return {
    excessMs: summarize(excess),
    openedExcessMs: null,
    others,
    allSeenAfterMs,
    window,
    details: {
      agents: group.size,
      allSeenAfterStopMs: allSeenAfterMs,
      excessMs: roundSummary(summarize(excess)),
      sinceMinusLeaseExpiresAtMs: roundSummary(summarize(leaseExcess)),
      eventAtMinusSinceMs: eventLag.length > 0 ? roundSummary(summarize(eventLag)) : null,
      eventsSeen: eventLag.length,
      beatsAnsweredAfterTheLastClientAck: beatAfterLastAck,
      otherAgentsLost: others,
      listingMs: polls,
      excessByAgentMs: excess.map((x) => round(x, 1)),
    },
  };
}

/** Freeze the stalled process's `step` and measure when its agents are stalled. */
export async function measureStalled(
  admin: HttpClient,
  proc: FleetProcess,
  opened: OpenedConditions,
  log: (m: string) => void,
): Promise<DetectionResult> {
  const group = new Set(proc.agentIds);
  const fromUs = monotonicUs();
  const frozenAt = (await ask(proc, 'freeze', 'frozen')).at as number;
  log(`fleet: ${group.size} agents stop moving step; stalled after ${STALL_THRESHOLD_MS} ms`);
  const { listing, polls } = await pollUntilAll(
    admin,
    'stalled',
    group,
    frozenAt + STALL_THRESHOLD_MS + POLL_MARGIN_MS,
  );
  const allSeenAfterMs = Date.now() - frozenAt;
  const window = { fromUs, toUs: monotonicUs() };
  const sinceExcess: number[] = [];
  const openedExcess: number[] = [];
  let clockMismatches = 0;
  let changedAfterFreeze = 0;
  for (const agent of listing.agents.filter((a) => group.has(a.id))) {
    const c = conditionOf(agent, 'progress_stalled');
    const changedAt = num(agent.progressChangedAt, `agent ${agent.id} progressChangedAt`);
    const thresholdMs = num(
      c.evidence.thresholdMs,
      `agent ${agent.id} progress_stalled evidence.thresholdMs`,
    );
    if (c.evidence.unchangedSinceAt !== changedAt) clockMismatches++;
    // A beat in flight at the freeze may still have moved it (a few ms later).
    if (changedAt > frozenAt + 1000) changedAfterFreeze++;
    const due = changedAt + thresholdMs;
    sinceExcess.push(c.since - due);
    const at = opened.at(agent.id, 'progress_stalled');
    if (at !== undefined) openedExcess.push(at - due);
  }
  if (changedAfterFreeze > 0) {
    throw new Error(`${changedAfterFreeze} stalled agents moved their step more than 1 s after the freeze`);
  }
  const others = listing.agents.length - group.size;
  const openedSummary = openedExcess.length > 0 ? summarize(openedExcess) : null;
  return {
    excessMs: summarize(sinceExcess),
    openedExcessMs: openedSummary,
    others,
    allSeenAfterMs,
    window,
    details: {
      agents: group.size,
      allSeenAfterFreezeMs: allSeenAfterMs,
      sinceMinusDueMs: roundSummary(summarize(sinceExcess)),
      openedEventAtMinusDueMs: openedSummary === null ? null : roundSummary(openedSummary),
      eventsSeen: openedExcess.length,
      evidenceUnchangedSinceDiffersFromProgressChangedAt: clockMismatches,
      otherAgentsStalled: others,
      listingMs: polls,
      openedExcessByAgentMs: openedExcess.map((x) => round(x, 1)),
    },
  };
}
