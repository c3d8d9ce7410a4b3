/**
 * Alerts end to end in the service (manual clock, real SQLite, real receivers on 127.0.0.1): grouping,
 * inhibition, resolution, repeat and escalation, retries against a receiver that is down, and the
 * three channels — a webhook whose HMAC signature is checked, a Slack-shaped receiver, an SMTP server.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { StreamEvent } from '@rouse/protocol';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { parsePolicies } from '../../core/policies/load-policies.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import type { Store } from '../../store/store.js';
import {
  type HttpReceiver,
  refusedUrl,
  startHangingReceiver,
  startHttpReceiver,
  startSmtpReceiver,
} from '../../test-support/alert-receivers.js';
import { settle } from '../../test-support/coordinator-fixture.js';
import { createEventBus } from '../event-bus.js';
import { fixedPolicies } from '../policy-registry.js';
import { type Alerts, createAlerts, type RaiseAlert } from './alerts.js';

const SECRET = 'hook-secret-123';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function policiesFrom(yaml: string) {
  const parsed = parsePolicies(yaml, 'rouse.yaml');
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return fixedPolicies(parsed.set);
}

interface Setup {
  clock: ManualClock;
  store: Store;
  alerts: Alerts;
  events: StreamEvent[];
  /** Move the clock and wait for what it started (evaluations, deliveries, retries). */
  advance(ms: number): Promise<void>;
  /** Another coordinator's alerts service on the same store. */
  another(): Alerts;
}

function setup(
  channels: string,
  timing = '{ group_wait: 30s, group_interval: 5m, repeat_interval: 4h, escalate_after: 15m }',
): Setup {
  const clock = new ManualClock(1_700_000_000_000);
  const store = createSqliteStore({ path: ':memory:', clock });
  const logger = pino({ level: 'silent' });
  const policies = policiesFrom(`channels:\n${channels}\nalerts: ${timing}\n`);
  const bus = createEventBus(logger);
  const events: StreamEvent[] = [];
  bus.subscribe((e) => events.push(e));
  const services: Alerts[] = [];
  const make = () => {
    const a = createAlerts({
      store,
      clock,
      bus,
      logger,
      policies,
      options: { env: { OPS_SECRET: SECRET }, timeoutMs: 5000 },
    });
    a.start();
    services.push(a);
    return a;
  };
  const alerts = make();
  cleanups.push(async () => {
    for (const s of services) s.stop();
    await Promise.all(services.map((s) => s.idle()));
    await store.close();
  });
  return {
    clock,
    store,
    alerts,
    events,
    async advance(ms) {
      clock.advance(ms);
      for (let i = 0; i < 4; i++) {
        await settle();
        await Promise.all(services.map((s) => s.idle()));
        clock.advance(0);
      }
    },
    another: make,
  };
}

async function receiver(status = 200): Promise<HttpReceiver> {
  const r = await startHttpReceiver(status);
  cleanups.push(() => r.close());
  return r;
}

const stall = (agentId: string, over: Partial<RaiseAlert> = {}): RaiseAlert => ({
  agentId,
  agentType: 'llm_chain',
  condition: 'progress_stalled',
  severity: 'high',
  channels: ['ops'],
  summary: `${agentId}: progress has not moved for 5 min`,
  evidence: { stalledForMs: 300_000 },
  source: 'alert_rung',
  ...over,
});

const agents = (n: number, prefix = 'agt_') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

/** The webhook bodies received, parsed, after checking each one's signature. */
function signedBodies(r: HttpReceiver): {
  kind: string;
  alert: { id: string; agentIds: string[]; severity: string; group: { condition: string } };
}[] {
  return r.requests.map((req) => {
    const timestamp = String(req.headers['x-rouse-timestamp']);
    const expected = `sha256=${createHmac('sha256', SECRET).update(`${timestamp}.${req.body}`).digest('hex')}`;
    const got = String(req.headers['x-rouse-signature']);
    expect(got.length).toBe(expected.length);
    expect(timingSafeEqual(Buffer.from(got), Buffer.from(expected))).toBe(true);
    return JSON.parse(req.body);
  });
}

describe('alerts', () => {
  it('forty agents stalling on one outage make ONE notification per channel (webhook, Slack, email), then one resolved', async () => {
    const ops = await receiver();
    const slack = await receiver();
    const smtp = await startSmtpReceiver();
    cleanups.push(() => smtp.close());
    const s = setup(
      `  ops: { type: webhook, url: "${ops.url}", secret_env: OPS_SECRET }\n` +
        `  slack: { type: slack, webhook_url: "${slack.url}" }\n` +
        `  email: { type: email, smtp: { host: 127.0.0.1, port: ${smtp.port} }, from: "rouse@example.test", to: ["oncall@example.test"] }`,
    );
    const raised = await Promise.all(
      agents(40).map((a) => s.alerts.raise(stall(a, { channels: ['ops', 'slack', 'email'] }))),
    );
    expect(new Set(raised.map((a) => a?.id)).size).toBe(1);
    const id = raised[0]!.id;

    await s.advance(29_000);
    expect([ops.requests.length, slack.requests.length, smtp.mails.length]).toEqual([0, 0, 0]);
    await s.advance(1000);
    expect([ops.requests.length, slack.requests.length, smtp.mails.length]).toEqual([1, 1, 1]);

    const [hook] = signedBodies(ops);
    expect(hook).toMatchObject({
      kind: 'firing',
      alert: { id, severity: 'high', group: { condition: 'progress_stalled' } },
    });
    expect(hook!.alert.agentIds).toHaveLength(40);
    const slackBody = JSON.parse(slack.requests[0]!.body) as { text: string; blocks: { type: string }[] };
    expect(slackBody.text).toBe('[HIGH] progress_stalled on llm_chain: 40 agents');
    expect(slackBody.blocks.map((b) => b.type)).toEqual(['header', 'section', 'context']);
    expect(smtp.mails[0]).toMatchObject({ from: 'rouse@example.test', to: ['oncall@example.test'] });
    expect(smtp.mails[0]!.data).toContain('Subject: [HIGH] progress_stalled on llm_chain: 40 agents');
    expect(smtp.mails[0]!.data).toContain('and 20 more');

    const notified = await s.alerts.get(id);
    expect(notified?.notifications.map((n) => `${n.channel} ${n.kind} ${n.attempt} ${n.ok}`).sort()).toEqual([
      'email firing 1 true',
      'ops firing 1 true',
      'slack firing 1 true',
    ]);

    // Thirty-nine recover: no news. The last one: resolved, once per channel.
    for (const a of agents(39)) await s.alerts.clear({ agentId: a, condition: 'progress_stalled' });
    await s.advance(1000);
    expect(ops.requests).toHaveLength(1);
    const [last] = await s.alerts.clear({ agentId: 'agt_39', condition: 'progress_stalled' });
    expect(last).toMatchObject({ id, state: 'resolved' });
    await s.advance(1000);
    expect([ops.requests.length, slack.requests.length, smtp.mails.length]).toEqual([2, 2, 2]);
    expect(signedBodies(ops)[1]).toMatchObject({ kind: 'resolved', alert: { id } });
    expect(JSON.parse(slack.requests[1]!.body).text).toBe(
      '[RESOLVED] progress_stalled on llm_chain (40 agents)',
    );
    await s.advance(4 * 3_600_000);
    expect(ops.requests).toHaveLength(2);

    // Every change was an `alert` event: opened and joined, notified, delivered, cleared, resolved.
    const states = s.events.flatMap((e) => (e.type === 'alert' ? [e.alert.state] : []));
    expect(states.length).toBeGreaterThan(40);
    expect(states.at(-1)).toBe('resolved');
  });

  it('a stall group covered by a firing dependency_down group is inhibited until the outage ends', async () => {
    const ops = await receiver();
    const s = setup(`  ops: { type: webhook, url: "${ops.url}", secret_env: OPS_SECRET }`);
    for (const a of agents(40)) {
      await s.alerts.raise(stall(a, { condition: 'dependency_down', summary: 'openai is down' }));
      await s.alerts.raise(stall(a));
    }
    await s.advance(30_000);
    expect(signedBodies(ops).map((b) => b.alert.group.condition)).toEqual(['dependency_down']);
    // Still inhibited at every step a stall would have been notified (changed, repeat, escalation).
    await s.advance(15 * 60_000);
    expect(signedBodies(ops).map((b) => `${b.alert.group.condition} ${b.kind}`)).toEqual([
      'dependency_down firing',
      'dependency_down escalated',
    ]);

    // The outage ends and the agents are still stalled: now the stall is news.
    for (const a of agents(40)) await s.alerts.clear({ agentId: a, condition: 'dependency_down' });
    await s.advance(1000);
    const told = signedBodies(ops).map((b) => `${b.alert.group.condition} ${b.kind}`);
    expect(told.slice(2).sort()).toEqual(['dependency_down resolved', 'progress_stalled firing']);
  });

  it('a stall group only partly covered by the outage is not inhibited', async () => {
    const ops = await receiver();
    const s = setup(`  ops: { type: webhook, url: "${ops.url}", secret_env: OPS_SECRET }`);
    await s.alerts.raise(stall('agt_a', { condition: 'dependency_down' }));
    await s.alerts.raise(stall('agt_a'));
    await s.alerts.raise(stall('agt_b'));
    await s.advance(30_000);
    expect(
      signedBodies(ops)
        .map((b) => b.alert.group.condition)
        .sort(),
    ).toEqual(['dependency_down', 'progress_stalled']);
  });

  it('new agents at most every group_interval, escalation one level every escalate_after, repeats every repeat_interval', async () => {
    const ops = await receiver();
    const s = setup(`  ops: { type: webhook, url: "${ops.url}", secret_env: OPS_SECRET }`);
    const seen = () =>
      signedBodies(ops).map((b) => `${b.kind} ${b.alert.severity} ${b.alert.agentIds.length}`);
    await s.alerts.raise(stall('agt_1', { severity: 'low' }));
    await s.advance(30_000);
    expect(seen()).toEqual(['firing low 1']);
    await s.advance(30_000); // t = 1 min
    await s.alerts.raise(stall('agt_2', { severity: 'low' }));
    await s.advance(60_000); // t = 2 min: the group was notified at 30 s, so not before 5 min 30 s
    expect(seen()).toEqual(['firing low 1']);
    await s.advance(210_000); // t = 5 min 30 s
    expect(seen()).toEqual(['firing low 1', 'changed low 2']);
    await s.advance(570_000); // t = 15 min
    expect(seen().at(-1)).toBe('escalated medium 2');
    await s.advance(15 * 60_000); // t = 30 min
    await s.advance(15 * 60_000); // t = 45 min
    expect(seen().slice(2)).toEqual(['escalated medium 2', 'escalated high 2', 'escalated critical 2']);
    // Critical is the top: from now on only the repeat, 4 h after the last notification.
    await s.advance(4 * 3_600_000 - 1000);
    expect(seen()).toHaveLength(5);
    await s.advance(1000);
    expect(seen().at(-1)).toBe('repeat critical 2');
    expect(seen()).toHaveLength(6);
  });

  it('a receiver that is down: raise returns at once, deliveries are retried with backoff and each attempt recorded', async () => {
    const url = await refusedUrl();
    const s = setup(`  ops: { type: webhook, url: "${url}", secret_env: OPS_SECRET }`, '{ group_wait: 0s }');
    const alert = await s.alerts.raise(stall('agt_1'));
    // raise() wrote the alert and returned: nothing was attempted yet.
    expect(alert).toMatchObject({ state: 'firing', notifications: [] });
    await s.advance(0);
    const attempts = async () => (await s.alerts.get(alert!.id))!.notifications;
    expect(await attempts()).toHaveLength(1);
    expect((await attempts())[0]).toMatchObject({ channel: 'ops', kind: 'firing', attempt: 1, ok: false });
    expect((await attempts())[0]!.error).toMatch(/ECONNREFUSED/);
    // Retries 1 s, 2 s, 4 s, 8 s later; five attempts in all, then it gives up.
    await s.advance(999);
    expect(await attempts()).toHaveLength(1);
    await s.advance(1);
    expect(await attempts()).toHaveLength(2);
    await s.advance(2000);
    await s.advance(4000);
    await s.advance(8000);
    await s.advance(60_000);
    const all = await attempts();
    expect(all.map((n) => [n.attempt, n.ok])).toEqual([
      [1, false],
      [2, false],
      [3, false],
      [4, false],
      [5, false],
    ]);
    expect(all.map((n) => n.at - all[0]!.at)).toEqual([0, 1000, 3000, 7000, 15_000]);
    expect(s.alerts.deliveryCounts().sort((a, b) => a.outcome.localeCompare(b.outcome))).toEqual([
      { channel: 'ops', outcome: 'failed', count: 4 },
      { channel: 'ops', outcome: 'gave_up', count: 1 },
    ]);
  });

  it('a receiver that never answers delays neither raise nor the other alerts (detection and the ladder are not delayed)', async () => {
    const hanging = await startHangingReceiver();
    const ops = await receiver();
    const s = setup(
      `  hang: { type: webhook, url: "${hanging.url}" }\n  ops: { type: webhook, url: "${ops.url}", secret_env: OPS_SECRET }`,
      '{ group_wait: 0s }',
    );
    cleanups.push(() => hanging.close());
    await s.alerts.raise(stall('agt_1', { channels: ['hang'] }));
    for (let i = 0; i < 200 && hanging.received() === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(hanging.received()).toBe(1);
    // The first delivery hangs; raising and notifying other alerts goes on.
    const other = await s.alerts.raise(stall('agt_2', { condition: 'heartbeat_timeout', channels: ['ops'] }));
    expect(other?.state).toBe('firing');
    for (let i = 0; i < 200 && ops.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(signedBodies(ops).map((b) => b.alert.group.condition)).toEqual(['heartbeat_timeout']);
    const stalledAlert = async () =>
      (await s.alerts.list({ states: ['firing'] })).alerts.find(
        (a) => a.group.condition === 'progress_stalled',
      );
    expect((await stalledAlert())?.notifications).toEqual([]);
    // Stopping abandons the delivery under way at once (recorded as such), without waiting for its timeout.
    s.alerts.stop();
    await s.alerts.idle();
    expect((await stalledAlert())?.notifications).toMatchObject([
      { channel: 'hang', ok: false, error: 'abandoned: the coordinator stopped', attempt: 1 },
    ]);
  });

  it('two coordinators on one store: one alert for the group and one notification', async () => {
    const ops = await receiver();
    const s = setup(`  ops: { type: webhook, url: "${ops.url}", secret_env: OPS_SECRET }`);
    const other = s.another();
    const raised = await Promise.all([
      ...agents(10, 'a').map((a) => s.alerts.raise(stall(a))),
      ...agents(10, 'b').map((a) => other.raise(stall(a))),
    ]);
    expect(new Set(raised.map((a) => a?.id)).size).toBe(1);
    await s.advance(30_000);
    expect(signedBodies(ops).map((b) => b.alert.agentIds.length)).toEqual([20]);
  });

  it('a webhook secret that is not set fails the delivery instead of sending it unsigned', async () => {
    const ops = await receiver();
    const s = setup(
      `  ops: { type: webhook, url: "${ops.url}", secret_env: MISSING_SECRET }`,
      '{ group_wait: 0s }',
    );
    const alert = await s.alerts.raise(stall('agt_1'));
    await s.advance(0);
    expect(ops.requests).toEqual([]);
    expect((await s.alerts.get(alert!.id))?.notifications[0]).toMatchObject({
      ok: false,
      error: 'webhook secret: the environment variable MISSING_SECRET is not set',
    });
  });

  it('a receiver answering an error is recorded with its status, and a later attempt that succeeds is ok', async () => {
    const ops = await receiver(503);
    const s = setup(
      `  ops: { type: webhook, url: "${ops.url}", secret_env: OPS_SECRET }`,
      '{ group_wait: 0s }',
    );
    const alert = await s.alerts.raise(stall('agt_1'));
    await s.advance(0);
    ops.status = 200;
    await s.advance(1000);
    expect((await s.alerts.get(alert!.id))?.notifications.map((n) => [n.attempt, n.ok, n.error])).toEqual([
      [1, false, 'HTTP 503: unavailable'],
      [2, true, null],
    ]);
    expect(ops.requests).toHaveLength(2);
  });
});
