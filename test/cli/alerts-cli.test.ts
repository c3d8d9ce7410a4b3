/**
 * `rouse alerts` with the real binary against a coordinator served on 127.0.0.1 (in this process, so
 * the test can raise alerts as the watchdog would): the table, --state, --json, bad input, and -f
 * following every change.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePolicies } from '../../packages/server/src/core/policies/load-policies.js';
import { fixedPolicies } from '../../packages/server/src/services/policy-registry.js';
import {
  type HttpReceiver,
  startHttpReceiver,
} from '../../packages/server/src/test-support/alert-receivers.js';
import { createHarness, type Harness, TOKENS } from '../../packages/server/src/test-support/api-harness.js';
import { type CliResult, runCli, spawnCliRunning, waitForExit } from './run-cli.js';

let dir: string;
let h: Harness;
let hook: HttpReceiver;
let url: string;

const rouse = (...args: string[]): Promise<CliResult> =>
  runCli([...args, '--url', url, '--token', TOKENS.readonly], { cwd: dir });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rouse-cli-alerts-'));
  hook = await startHttpReceiver();
  const parsed = parsePolicies(
    `channels:\n  ops: { type: webhook, url: "${hook.url}" }\nalerts: { group_wait: 0s }\n`,
    'rouse.yaml',
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  h = await createHarness({ policies: fixedPolicies(parsed.set) });
  url = await h.app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await h.close();
  await hook.close();
  await rm(dir, { recursive: true, force: true });
});

async function until<T>(probe: () => Promise<T | null> | T | null, what: string): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = await probe();
    if (v !== null) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const raise = (agentId: string, condition: 'progress_stalled' | 'heartbeat_timeout') =>
  h.alerts.raise({
    agentId,
    agentType: 'cli-alerts',
    condition,
    severity: 'high',
    channels: ['ops'],
    summary: `${agentId} needs a look`,
    source: 'alert_rung',
  });

describe('rouse alerts', () => {
  it('lists alerts as a table and as JSON, filters by state, refuses a bad state, and follows changes', async () => {
    expect((await rouse('alerts')).stdout).toContain('no alerts yet');
    const follower = spawnCliRunning(['alerts', '-f', '--json', '--url', url, '--token', TOKENS.readonly], {
      cwd: dir,
    });
    try {
      await until(() => (follower.err().includes('following alerts') ? true : null), 'the follower');
      const stalled = await raise('agt_1', 'progress_stalled');
      await raise('agt_2', 'progress_stalled');
      const lost = await raise('agt_3', 'heartbeat_timeout');
      await until(() => (hook.requests.length >= 2 ? true : null), 'two notifications');
      await h.alerts.idle();
      await h.alerts.clear({ agentId: 'agt_3', condition: 'heartbeat_timeout' });
      await until(() => (hook.requests.length >= 3 ? true : null), 'the resolved notification');
      await h.alerts.idle();

      const table = await rouse('alerts');
      expect(table.code).toBe(0);
      const lines = table.stdout.split('\n');
      expect(lines[0]).toMatch(/ID\s+STATE\s+SEVERITY\s+AGENT TYPE\s+CONDITION\s+AGENTS/);
      expect(lines[1]).toMatch(
        new RegExp(`${lost!.id}\\s+resolved\\s+high\\s+cli-alerts\\s+heartbeat_timeout\\s+1`),
      );
      expect(lines[2]).toMatch(
        new RegExp(`${stalled!.id}\\s+firing\\s+high\\s+cli-alerts\\s+progress_stalled\\s+2`),
      );
      expect(lines[2]).toContain('1 ok');

      const firing = JSON.parse((await rouse('alerts', '--state', 'firing', '--json')).stdout);
      expect(firing.alerts.map((a: { id: string }) => a.id)).toEqual([stalled!.id]);
      expect(firing.alerts[0].notifications[0]).toMatchObject({ channel: 'ops', ok: true });
      const one = JSON.parse((await rouse('alerts', '--limit', '1', '--json')).stdout);
      expect(one.alerts).toHaveLength(1);

      const bad = await rouse('alerts', '--state', 'burning');
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--state: "burning" is not a state');

      // The follower printed every change, one JSON object per line, ending with the resolution.
      const changes = await until(() => {
        const all = follower
          .out()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { id: string; state: string });
        return all.some((c) => c.id === lost!.id && c.state === 'resolved') ? all : null;
      }, 'followed changes');
      expect(changes.some((c) => c.id === stalled!.id && c.state === 'firing')).toBe(true);
    } finally {
      follower.child.kill('SIGINT');
      await waitForExit(follower.child);
    }
  });
});
