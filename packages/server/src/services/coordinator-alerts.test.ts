/**
 * Alerts in the coordinator (manual clock, real SQLite, a real webhook receiver): the coordinator
 * runs the alert loop on its clock, so `group_wait` passes when the clock says; the routes' reads see
 * the grouped alert; stopping the coordinator stops its retries.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parsePolicies } from '../core/policies/load-policies.js';
import { type HttpReceiver, refusedUrl, startHttpReceiver } from '../test-support/alert-receivers.js';
import {
  ADMIN,
  type CoordinatorFixture,
  createFixture,
  READONLY,
} from '../test-support/coordinator-fixture.js';
import { fixedPolicies } from './policy-registry.js';

let f: CoordinatorFixture;
let hook: HttpReceiver | null = null;
afterEach(async () => {
  await f.close();
  await hook?.close();
  hook = null;
});

function policies(url: string) {
  const parsed = parsePolicies(
    `channels:\n  ops: { type: webhook, url: "${url}" }\nalerts: { group_wait: 30s }\n`,
    'p.yaml',
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return fixedPolicies(parsed.set);
}

const stall = (agentId: string) => ({
  agentId,
  agentType: 'llm_chain',
  condition: 'progress_stalled' as const,
  severity: 'medium' as const,
  summary: `${agentId} stalled`,
  source: 'recovery_failed' as const,
});

describe('alerts in the coordinator', () => {
  it('runs the alert loop on the coordinator clock: one grouped notification after group_wait', async () => {
    hook = await startHttpReceiver();
    f = await createFixture({ policies: policies(hook.url) });
    for (let i = 0; i < 40; i++) await f.coordinator.alerts.raise(stall(`agt_${i}`));
    await f.advance(29_000);
    expect(hook.requests).toHaveLength(0);
    await f.advance(1000);
    expect(hook.requests).toHaveLength(1);
    const { alerts } = await f.coordinator.listAlerts(READONLY, { states: ['firing'] });
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ agentIds: expect.arrayContaining(['agt_0', 'agt_39']), channels: [] });
    expect(alerts[0]?.agentIds).toHaveLength(40);
    // Raised without channels: notified through every channel of the file.
    expect(alerts[0]?.notifications.map((n) => [n.channel, n.ok])).toEqual([['ops', true]]);
    expect(await f.coordinator.getAlert(ADMIN, alerts[0]!.id)).toEqual(alerts[0]);
    await expect(f.coordinator.getAlert(ADMIN, 'alr_missing')).rejects.toMatchObject({ code: 'not_found' });
    const gauges = await f.coordinator.watchdogGauges();
    expect(gauges.alertNotifications).toEqual([{ channel: 'ops', outcome: 'delivered', count: 1 }]);
  });

  it('stopping the coordinator cancels the retries of a delivery that failed', async () => {
    f = await createFixture({ policies: policies(await refusedUrl()) });
    const raised = await f.coordinator.alerts.raise(stall('agt_1'));
    await f.advance(30_000);
    const attempts = async () => (await f.coordinator.getAlert(ADMIN, raised!.id)).notifications.length;
    expect(await attempts()).toBe(1);
    await f.coordinator.stop();
    await f.advance(60_000);
    expect(await attempts()).toBe(1);
  });
});
