/**
 * Issue 10, test 1: the policy of the design's example, end to end under `rouse supervise` — real
 * coordinator, supervisor, agent process, signals, and real Slack-shaped and SMTP receivers on
 * loopback. A stalled agent is sent SIGUSR1 twice (its supervisor sends it; the SDK gets the wake);
 * nothing cures it, so `recovery_failed` alerts reach Slack and email, each once. Frozen with SIGSTOP
 * it goes lost and is snapshot-and-restarted through its supervisor, and the new incarnation starts
 * from its snapshot.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Agent, Client, type Intervention } from '@rouse/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type HttpReceiver,
  type ReceivedMail,
  startHttpReceiver,
  startSmtpReceiver,
} from '../../packages/server/src/test-support/alert-receivers.js';
import {
  type CoordinatorProcess,
  ROUSE_BIN,
  startCoordinatorProcess,
} from '../harness/coordinator-process.js';
import { writePolicyFile } from '../harness/policy-file.js';
import { type Spawned, spawnNode } from '../harness/processes.js';
import { tempDir } from '../harness/temp-dir.js';
import { waitFor } from '../harness/wait.js';

const AGENT = fileURLToPath(new URL('../fixtures/llm-chain-agent.mjs', import.meta.url));

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Event = {
  event: string;
  pid: number;
  incarnation?: number;
  restored?: { step?: number } | null;
  step?: number;
};
const eventsIn = (file: string): Event[] => {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Event);
  } catch {
    return [];
  }
};

describe("the design's example policy under rouse supervise", () => {
  it('signals a stalled agent twice, alerts recovery_failed once per channel, and restarts a frozen one from its snapshot', async () => {
    const slack: HttpReceiver = await startHttpReceiver();
    cleanups.push(() => slack.close());
    const smtp = await startSmtpReceiver();
    cleanups.push(() => smtp.close());
    const policy = `
channels:
  slack: { type: slack, webhook_url: "${slack.url}" }
  email: { type: email, smtp: { host: 127.0.0.1, port: ${smtp.port} }, from: "rouse@test.local", to: ["oncall@test.local"] }
alerts: { group_wait: 0s, group_interval: 1s, repeat_interval: 1h }
policies:
  - name: default_llm_agent_policy
    agent_type: llm_chain
    heartbeat:
      expected_interval: 0.3 # seconds
      timeout_factor: 3
    stall_detection:
      enabled: true
      progress_field: step_progress
      stall_threshold: 1
    recovery_actions:
      - action: send_signal
        signal: SIGUSR1
        on_condition: stall_detected
        max_attempts: 2
        timeout: 1s
      - action: snapshot_and_restart
        on_condition: heartbeat_timeout
        snapshot_ttl: 3600
        timeout: 20s
      - action: alert
        channels: [slack, email]
        on_condition: recovery_failed
        severity: high
`;
    const coord: CoordinatorProcess = await startCoordinatorProcess({
      extraArgs: ['--policies', writePolicyFile(policy)],
    });
    cleanups.push(() => coord.kill('SIGTERM'));
    const admin = new Client({ url: coord.url, token: coord.adminToken });

    const dir = tempDir('rouse-watchdog-');
    const eventsFile = join(dir, 'agent-events.jsonl');
    const hostFile = join(dir, 'host.yaml');
    writeFileSync(
      hostFile,
      `
name: host-1
programs:
  - name: chain
    command: ["${process.execPath}", "${AGENT}"]
    agent_type: llm_chain
    env: { EVENTS_FILE: "${eventsFile}", STALL_AT: "5" }
    restart: { backoff: 100ms, max_backoff: 1s, budget: 5, window: 1m }
    stop: { signal: SIGTERM, grace: 500ms }
    wake_signal: SIGUSR1
`,
    );
    const sup: Spawned = spawnNode([ROUSE_BIN, 'supervise', '-c', hostFile, '--json'], {
      ROUSE_URL: coord.url,
      ROUSE_AGENT_TOKEN: coord.agentToken,
    });
    cleanups.push(async () => {
      for (const e of eventsIn(eventsFile)) {
        try {
          process.kill(e.pid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
      sup.kill('SIGKILL');
      await sup.exited;
    });

    // The agent registers under its supervisor and stalls at step 5.
    const first = await waitFor(() => eventsIn(eventsFile).find((e) => e.event === 'started') ?? null, {
      what: 'the agent to start',
      timeoutMs: 20_000,
    });
    const agentId = (first as unknown as { agentId: string }).agentId;
    const agent: Agent = await admin.getAgent(agentId);
    expect(agent).toMatchObject({ key: 'host-1/chain-1', agentType: 'llm_chain', incarnation: 1 });
    expect(agent.supervisorId).not.toBeNull();

    // Two signals (each a wake the SDK sees, and SIGUSR1 from the supervisor), then recovery_failed.
    const exhausted = await waitFor(
      async () => {
        const list = (await admin.listInterventions({ agentId })).interventions as Intervention[];
        return list.some((i) => i.condition === 'recovery_failed' && i.state !== 'pending')
          ? list.slice().reverse()
          : null;
      },
      { what: 'the stall ladder to run out', timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(exhausted.map((i) => `${i.condition}/${i.action}#${i.attempt}:${i.state}`)).toEqual([
      'progress_stalled/send_signal#1:failed',
      'progress_stalled/send_signal#2:failed',
      'recovery_failed/alert#1:succeeded',
    ]);
    const sigusr1 = eventsIn(eventsFile).filter((e) => e.event === 'sigusr1');
    expect(sigusr1).toHaveLength(2);
    expect(eventsIn(eventsFile).filter((e) => e.event === 'wake')).toHaveLength(2);
    // Each channel got the firing alert once.
    const firing = (texts: string[]) =>
      texts.filter((t) => t.includes('recovery_failed') && !t.includes('RESOLVED'));
    expect(firing(slack.requests.map((r) => r.body))).toHaveLength(1);
    const mails = (m: ReceivedMail[]) => m.map((x) => x.data);
    expect(firing(mails(smtp.mails))).toHaveLength(1);
    expect(slack.requests[0]?.body).toContain('"text"');
    expect(smtp.mails[0]?.to).toEqual(['oncall@test.local']);

    // Frozen: lost, then snapshot-and-restarted through the supervisor; the new incarnation resumes.
    process.kill(first.pid, 'SIGSTOP');
    const resumed = await waitFor(
      () => eventsIn(eventsFile).find((e) => e.event === 'started' && e.incarnation === 2) ?? null,
      { what: 'the second incarnation', timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(resumed.pid).not.toBe(first.pid);
    expect(resumed.restored).toEqual({ step: 5 });
    await waitFor(
      () =>
        eventsIn(eventsFile).some((e) => e.event === 'step' && e.pid === resumed.pid && (e.step ?? 0) >= 10),
      {
        what: 'the new incarnation to move past the stall',
        timeoutMs: 10_000,
      },
    );
    const restart = await waitFor(
      async () => {
        const list = (await admin.listInterventions({ agentId })).interventions as Intervention[];
        const r = list.find((i) => i.action === 'snapshot_and_restart');
        return r !== undefined && r.state !== 'pending' ? r : null;
      },
      { what: 'the restart to end', timeoutMs: 20_000, intervalMs: 100 },
    );
    expect(restart).toMatchObject({ condition: 'heartbeat_timeout', state: 'succeeded', incarnation: 1 });
    expect(restart.evidence.restartAck).toMatchObject({ outcome: 'done', by: 'supervisor' });
    // Still one firing notification per channel.
    expect(firing(slack.requests.map((r) => r.body))).toHaveLength(1);
    expect(firing(mails(smtp.mails))).toHaveLength(1);
  });
});
