/**
 * Alerts over HTTP: `GET /v1/alerts` (newest first, by state, paged) and `/v1/alerts/{id}` with the
 * delivery attempts, for any reading token; the `alert` event on the stream's bus; the delivery counter
 * in `/metrics` — with a real webhook receiver on 127.0.0.1.
 */
import type { Alert } from '@rouse/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { parsePolicies } from '../core/policies/load-policies.js';
import { fixedPolicies } from '../services/policy-registry.js';
import { type HttpReceiver, startHttpReceiver } from '../test-support/alert-receivers.js';
import { createHarness, type Harness, TOKENS } from '../test-support/api-harness.js';

let h: Harness;
let hook: HttpReceiver;
afterEach(async () => {
  await h.close();
  await hook.close();
});

async function start(): Promise<void> {
  hook = await startHttpReceiver();
  const parsed = parsePolicies(
    `channels:\n  ops: { type: webhook, url: "${hook.url}" }\nalerts: { group_wait: 0s }\n`,
    'rouse.yaml',
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  h = await createHarness({ policies: fixedPolicies(parsed.set) });
}

const raise = (agentId: string, condition: 'progress_stalled' | 'heartbeat_timeout' = 'progress_stalled') =>
  h.alerts.raise({
    agentId,
    agentType: 'llm_chain',
    condition,
    severity: 'high',
    channels: ['ops'],
    summary: `${agentId} is stuck`,
    source: 'alert_rung',
  });

describe('alert routes', () => {
  it('lists alerts newest first by state, a page at a time, and shows one with its deliveries', async () => {
    await start();
    const events: string[] = [];
    const unsubscribe = h.coordinator.subscribe((e) => {
      if (e.type === 'alert') events.push(`${e.alert.group.condition} ${e.alert.state}`);
    });
    const stalled = await raise('agt_1');
    await raise('agt_2');
    const timedOut = await raise('agt_1', 'heartbeat_timeout');
    await h.alerts.clear({ agentId: 'agt_1', condition: 'heartbeat_timeout' });
    for (let i = 0; i < 400 && hook.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    await h.alerts.idle();
    unsubscribe();

    const list = await h.request('GET', '/v1/alerts', { token: TOKENS.readonly });
    expect(list.statusCode).toBe(200);
    expect(list.json().alerts.map((a: Alert) => a.id)).toEqual([timedOut!.id, stalled!.id]);
    expect(list.json().nextCursor).toBeNull();
    const firing = (await h.request('GET', '/v1/alerts?state=firing')).json().alerts as Alert[];
    expect(firing.map((a) => [a.id, a.agentIds])).toEqual([[stalled!.id, ['agt_1', 'agt_2']]]);
    const resolved = (await h.request('GET', '/v1/alerts?state=resolved')).json().alerts as Alert[];
    expect(resolved.map((a) => a.id)).toEqual([timedOut!.id]);
    const page = (await h.request('GET', '/v1/alerts?limit=1')).json();
    expect(page.alerts).toHaveLength(1);
    const next = (await h.request('GET', `/v1/alerts?limit=1&cursor=${page.nextCursor}`)).json();
    expect(next.alerts.map((a: Alert) => a.id)).toEqual([stalled!.id]);

    const one = await h.request('GET', `/v1/alerts/${stalled!.id}`, { token: TOKENS.readonly });
    expect(one.statusCode).toBe(200);
    expect(one.json().alert).toMatchObject({
      id: stalled!.id,
      group: { agentType: 'llm_chain', condition: 'progress_stalled' },
      severity: 'high',
      state: 'firing',
      agentIds: ['agt_1', 'agt_2'],
      summary: 'agt_2 is stuck',
      channels: ['ops'],
    });
    expect(one.json().alert.notifications[0]).toMatchObject({
      channel: 'ops',
      ok: true,
      error: null,
      attempt: 1,
    });
    expect(events).toContain('progress_stalled firing');
    expect(events).toContain('heartbeat_timeout resolved');

    const metrics = await h.request('GET', '/metrics');
    expect(metrics.body).toMatch(
      /rouse_alert_notifications_total\{channel="ops",outcome="delivered"\} [1-9]/,
    );
  });

  it('refuses bad queries, unknown ids, and callers without a reading token', async () => {
    await start();
    const bad = await h.request('GET', '/v1/alerts?state=burning');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('validation_failed');
    expect(bad.json().error.message).toContain('firing, resolved');
    expect((await h.request('GET', '/v1/alerts?limit=0')).statusCode).toBe(400);
    expect((await h.request('GET', '/v1/alerts?color=red')).statusCode).toBe(400);
    const missing = await h.request('GET', '/v1/alerts/alr_nope');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('not_found');
    expect((await h.request('GET', '/v1/alerts', { token: null })).statusCode).toBe(401);
    // Like every GET: any reading token (an agent's too), never the enrollment token.
    const agent = await h.register();
    expect((await h.request('GET', '/v1/alerts', { token: agent.token })).statusCode).toBe(200);
    expect((await h.request('GET', '/v1/alerts', { token: TOKENS.enrollment })).statusCode).toBe(403);
  });
});
