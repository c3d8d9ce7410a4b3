/**
 * Recovery: how fast the watchdog acts. One `rouse supervise` runs 20 plain programs (quick: 5) that
 * write a line every 200 ms and now and then fall silent — a stall no restart is needed for: SIGUSR1
 * wakes them. The policy watches their output (a plain child's progress is its last output) with a
 * 2 s stall threshold and a `send_signal` rung. For every stall, from the condition opening (its
 * `since`, the coordinator's clock) to the supervisor's acknowledgement that it sent the signal
 * (`signalAck.at`, the coordinator's clock when it recorded it): the time a hung agent waits for help.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Intervention, InterventionsResponse } from '@rouse/protocol';
import { startCoordinator } from './coordinator-process.js';
import { HttpClient } from './http-client.js';
import { monotonicUs, type ProfileWindow } from './profile-summary.js';
import { round, roundSummary, summarize } from './stats.js';
import { type SuperviseProcess, startSupervise } from './supervise-process.js';
import { attachProfile, type Metric, type WorkloadContext, type WorkloadResult } from './workload.js';

const W = 'recovery';
const STALL_THRESHOLD_MS = 2000;
const POLICY = `
policies:
  - name: bench_recovery
    agent_type: bench-stall
    heartbeat: { expected_interval: 1s, timeout_factor: 5 }
    stall_detection: { enabled: true, stall_threshold: ${STALL_THRESHOLD_MS / 1000}s }
    recovery_actions:
      - action: send_signal
        signal: SIGUSR1
        on_condition: stall_detected
        max_attempts: 1000
        timeout: 5s
`;
/** Writes a line every 200 ms; after 1–4 s falls silent until SIGUSR1. */
const PROGRAM = `
let silent = false;
let until = Date.now() + 1000 + Math.random() * 3000;
process.on('SIGUSR1', () => { silent = false; until = Date.now() + 1000 + Math.random() * 3000; });
setInterval(() => {
  if (silent) return;
  process.stdout.write('step\\n');
  if (Date.now() > until) silent = true;
}, 200);
`;

export async function recovery(ctx: WorkloadContext): Promise<WorkloadResult> {
  const children = ctx.quick ? 5 : 20;
  const windowMs = ctx.quick ? 15_000 : 90_000;
  const metrics: Metric[] = [];
  const details: Record<string, unknown> = { children, windowMs, stallThresholdMs: STALL_THRESHOLD_MS };
  const result: WorkloadResult = { workload: W, store: ctx.store.name, metrics, details };
  const windows: Record<string, ProfileWindow> = {};
  const coord = await startCoordinator({
    store: ctx.store,
    dataFiles: { 'policies.yaml': POLICY },
    cpuProfileDir: ctx.cpuProfileDir,
  });
  const admin = new HttpClient({ url: coord.url, token: coord.adminToken, maxSockets: 2 });
  const dir = mkdtempSync(join(tmpdir(), 'rouse-bench-recovery-'));
  let sup: SuperviseProcess | null = null;
  try {
    const program = join(dir, 'stalling.mjs');
    writeFileSync(program, PROGRAM);
    const config = join(dir, 'host.yaml');
    writeFileSync(
      config,
      `name: bench-recovery\nprograms:\n  - name: staller\n    command: ["${process.execPath}", "${program}"]\n    instances: ${children}\n    agent_type: bench-stall\n    sdk: false\n    stop: { grace: 1s }\n    wake_signal: SIGUSR1\n`,
    );
    ctx.log(`${W}: one supervisor, ${children} plain programs that stall now and then; ${windowMs / 1000} s`);
    sup = startSupervise(coord, config);
    const fromUs = monotonicUs();
    const startedAt = Date.now();
    await new Promise((r) => setTimeout(r, windowMs));
    if (sup.child.exitCode !== null) throw new Error(`rouse supervise exited: ${sup.stderr()}`);
    windows.window = { fromUs, toUs: monotonicUs() };

    const all: Intervention[] = [];
    let cursor: string | null = null;
    do {
      const page: InterventionsResponse = await admin.get<InterventionsResponse>(
        `/v1/interventions?limit=1000${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
      );
      all.push(...page.interventions);
      cursor = page.nextCursor;
    } while (cursor !== null);
    const signals = all.filter((i) => i.action === 'send_signal');
    const ackMs: number[] = [];
    const wakeToAckMs: number[] = [];
    const slowest: {
      ms: number;
      startedAt: number;
      actedAt: unknown;
      conditionSince: number;
      signalAck: unknown;
    }[] = [];
    for (const i of signals) {
      const since = i.evidence.conditionSince;
      const ack = i.evidence.signalAck as { at?: unknown } | undefined;
      if (typeof since !== 'number' || typeof ack?.at !== 'number') continue;
      ackMs.push(ack.at - since);
      wakeToAckMs.push(ack.at - i.startedAt);
      slowest.push({
        ms: ack.at - since,
        startedAt: i.startedAt,
        actedAt: i.evidence.actedAt ?? null,
        conditionSince: since,
        signalAck: i.evidence.signalAck ?? null,
      });
    }
    // The slowest few, with their steps (condition, rung started, command sent, acknowledged).
    details.slowest = slowest.sort((a, b) => b.ms - a.ms).slice(0, 5);
    // And attempts that failed (no acknowledgement within the rung's timeout): when, for whom.
    details.failedAttempts = signals
      .filter((i) => i.state === 'failed')
      .slice(0, 10)
      .map((i) => ({
        agentId: i.agentId,
        afterStartMs: i.startedAt - startedAt,
        reason: i.reason,
        acks: Object.keys(i.evidence).filter((k) => k.endsWith('Ack')),
      }));
    const states: Record<string, number> = {};
    for (const i of signals) states[i.state] = (states[i.state] ?? 0) + 1;
    details.interventions = { total: signals.length, byState: states, acknowledged: ackMs.length };
    details.elapsedMs = Date.now() - startedAt;
    if (ackMs.length === 0)
      throw new Error(`no acknowledged signal in ${signals.length} interventions: ${sup.stderr()}`);
    const s = summarize(ackMs);
    details.conditionToAckMs = roundSummary(s);
    details.rungStartToAckMs = roundSummary(summarize(wakeToAckMs));
    metrics.push({
      workload: W,
      metric: `condition opened → signal acknowledged by the supervisor p50 (${ackMs.length} stalls)`,
      value: round(s.p50, 1),
      unit: 'ms',
    });
    metrics.push({
      workload: W,
      metric: 'condition opened → signal acknowledged by the supervisor p99',
      value: round(s.p99, 1),
      unit: 'ms',
      target: { op: '<=', value: 100 },
    });
    // Of the attempts that ended (those of the window's last seconds are still under way).
    const ended = (states.succeeded ?? 0) + (states.failed ?? 0);
    metrics.push({
      workload: W,
      metric: `stalls cured by the signal (succeeded, of ${ended} ended attempts)`,
      value: ended === 0 ? null : round(((states.succeeded ?? 0) * 100) / ended, 1),
      unit: '%',
    });
    return result;
  } finally {
    await sup?.stop();
    admin.close();
    const { cpuProfile } = await coord.stop();
    attachProfile(ctx, details, cpuProfile, windows);
    rmSync(dir, { recursive: true, force: true });
  }
}
