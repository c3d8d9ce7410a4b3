/**
 * The Grafana dashboard shipped in `deploy/grafana/`: every query names only metrics `GET /metrics`
 * exports (a renamed metric breaks this test, not a user's dashboard), and the watchdog's key series
 * are on it.
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../test-support/api-harness.js';

const DASHBOARD = new URL('../../../../deploy/grafana/rouse-dashboard.json', import.meta.url);

interface Panel {
  title: string;
  targets?: { expr: string }[];
}

/** Metric names a Prometheus query reads (ours and the process's). */
const metricsIn = (expr: string): string[] => expr.match(/\b(?:rouse|process)_[a-z0-9_]+/g) ?? [];

/** Every series name the exposition text can hold: each family, and a histogram's parts. */
function exported(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = m as unknown as [string, string, string];
    names.add(name);
    if (type === 'histogram') for (const part of ['_bucket', '_sum', '_count']) names.add(`${name}${part}`);
  }
  return names;
}

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

describe('the Grafana dashboard', () => {
  it('queries only metrics the server exports, on every panel', async () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[]; uid: string };
    const names = exported((await h.request('GET', '/metrics')).payload);
    expect(dashboard.panels.length).toBeGreaterThan(10);
    for (const panel of dashboard.panels) {
      const used = (panel.targets ?? []).flatMap((t) => metricsIn(t.expr));
      expect(used.length, `panel "${panel.title}" queries something`).toBeGreaterThan(0);
      for (const name of used)
        expect(names.has(name), `panel "${panel.title}": ${name} is exported`).toBe(true);
    }
  });

  it("shows the watchdog's key series", () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[] };
    const used = new Set(
      dashboard.panels.flatMap((p) => (p.targets ?? []).flatMap((t) => metricsIn(t.expr))),
    );
    for (const name of [
      'rouse_agent_heartbeats_total',
      'rouse_agent_heartbeat_duration_seconds_bucket',
      'rouse_watchdog_evaluation_seconds_total',
      'rouse_agents',
      'rouse_interventions_total',
      'rouse_intervention_ack_seconds_bucket',
      'rouse_task_timeouts_total',
      'rouse_task_duration_seconds_bucket',
      'rouse_alert_notifications_total',
    ]) {
      expect(used.has(name), name).toBe(true);
    }
  });
});
