/**
 * Alerts with two coordinators on one PostgreSQL database (two stores, two pools, one schema, a real
 * webhook receiver): raising into one group from both makes one alert, and when both loops find it
 * due at once exactly one of them notifies it.
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type FreshSchema, freshSchema } from '../../../../../test/harness/postgres.js';
import { ManualClock } from '../../core/clock.js';
import { parsePolicies } from '../../core/policies/load-policies.js';
import { type Alerts, createAlerts } from '../../services/alerts/alerts.js';
import { createEventBus } from '../../services/event-bus.js';
import { fixedPolicies } from '../../services/policy-registry.js';
import { type HttpReceiver, startHttpReceiver } from '../../test-support/alert-receivers.js';
import { settle } from '../../test-support/coordinator-fixture.js';
import type { Store } from '../store.js';
import { createPostgresStore } from './postgres-store.js';

let db: FreshSchema;
let stores: Store[] = [];
let services: Alerts[] = [];
let hook: HttpReceiver;
afterEach(async () => {
  for (const s of services) s.stop();
  await Promise.all(services.map((s) => s.idle()));
  await Promise.all(stores.map((s) => s.close()));
  await db.drop();
  await hook.close();
  stores = [];
  services = [];
});

describe('alerts on PostgreSQL with two coordinators', () => {
  it('one alert for the group raised from both, one notification for it', async () => {
    db = await freshSchema('alerts');
    hook = await startHttpReceiver();
    const clock = new ManualClock(1_700_000_000_000);
    const parsed = parsePolicies(`channels:\n  ops: { type: webhook, url: "${hook.url}" }\n`, 'p.yaml');
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    const logger = pino({ level: 'silent' });
    for (let i = 0; i < 2; i++) {
      const store = await createPostgresStore({
        connectionString: db.connectionString,
        schema: db.schema,
        clock,
        poolSize: 4,
      });
      stores.push(store);
      const alerts = createAlerts({
        store,
        clock,
        bus: createEventBus(logger),
        logger,
        policies: fixedPolicies(parsed.set),
      });
      alerts.start();
      services.push(alerts);
    }
    const [a, b] = services as [Alerts, Alerts];
    const raised = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? a : b).raise({
          agentId: `agt_${i}`,
          agentType: 'llm_chain',
          condition: 'progress_stalled',
          severity: 'high',
          channels: ['ops'],
          summary: 'stalled',
          source: 'alert_rung',
        }),
      ),
    );
    expect(new Set(raised.map((r) => r?.id)).size).toBe(1);
    // Both loops wake at group_wait and both find the alert due: one of them wins.
    clock.advance(30_000);
    for (let i = 0; i < 4; i++) {
      await settle();
      await Promise.all(services.map((s) => s.idle()));
      await Promise.all(services.map((s) => s.evaluate()));
      clock.advance(0);
    }
    await Promise.all(services.map((s) => s.idle()));
    expect(hook.requests).toHaveLength(1);
    const body = JSON.parse(hook.requests[0]!.body) as { alert: { agentIds: string[] } };
    expect(body.alert.agentIds).toHaveLength(40);
    const [alert] = (await b.list({ states: ['firing'] })).alerts;
    expect(alert?.notifications.map((n) => [n.channel, n.ok])).toEqual([['ops', true]]);
  });
});
