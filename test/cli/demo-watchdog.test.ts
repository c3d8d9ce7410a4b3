/**
 * `rouse demo --act watchdog` end to end as a child process: a coordinator with a policy file,
 * `rouse supervise` running four agent programs, the demo's own webhook. It must run by itself, show
 * every recovery it promises — a wake that cured a stall, a frozen agent restarted from its snapshot,
 * a runaway restarted and then terminated, a restart held while a dependency was rate-limited and the
 * one alert that outage raised — stop everything it started, and exit 0.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Alert, Intervention } from '@rouse/protocol';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from './run-cli.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rouse-demo-watchdog-test-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Outcome {
  agents: { name: string; id: string }[];
  interventions: { agent: string; intervention: Intervention }[];
  alerts: Alert[];
  deliveries: { kind: string; condition: string; agentType: string; severity: string; title: string }[];
  agentEvents: { event: string; agent: string; pid: number; step?: number; incarnation?: number }[];
  finished: boolean;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

it('rouse demo --act watchdog recovers a stalled, a frozen, a leaking and a rate-limited agent, then exits 0', async () => {
  const dataDir = join(dir, 'data');
  const r = await runCli(
    ['demo', '--act', 'watchdog', '--json', '--duration', '100s', '--data-dir', dataDir],
    {
      cwd: dir,
      timeoutMs: 130_000,
    },
  );
  expect(r.code, r.stderr).toBe(0);
  const out = JSON.parse(r.stdout) as Outcome;
  expect(out.finished, r.stderr).toBe(true);
  const of = (agent: string) => out.interventions.filter((i) => i.agent === agent).map((i) => i.intervention);

  // staller: stalled, sent SIGUSR1 (a wake) by its supervisor, and moved again.
  // (Its first signal cures it; on a loaded machine the second may be the one.)
  const signals = of('staller-1').filter((i) => i.action === 'send_signal');
  expect(signals.map((i) => i.condition)).toContain('progress_stalled');
  expect(signals.at(-1)?.state).toBe('succeeded');
  expect(out.agentEvents.some((e) => e.agent === 'staller-1' && e.event === 'sigusr1')).toBe(true);
  expect(out.agentEvents.some((e) => e.agent === 'staller-1' && e.event === 'woken')).toBe(true);

  // hanger: frozen → lost → snapshot_and_restart through its supervisor; incarnation 2 resumed from its snapshot.
  expect(of('hanger-1').filter((i) => i.action === 'snapshot_and_restart')).toContainEqual(
    expect.objectContaining({ condition: 'heartbeat_timeout', state: 'succeeded' }),
  );
  const hanger = out.agentEvents.filter((e) => e.agent === 'hanger-1');
  const froze = hanger.findIndex((e) => e.event === 'freezing');
  expect(froze).toBeGreaterThanOrEqual(0);
  const resumed = hanger.slice(froze).find((e) => e.event === 'resumed');
  expect(resumed?.incarnation).toBeGreaterThanOrEqual(2);
  expect(resumed?.step).toBe(hanger[froze]?.step);

  // leaker: over its rss_limit → restarted from its snapshot; over it again → terminated.
  const leaker = of('leaker-1');
  expect(leaker.find((i) => i.action === 'snapshot_and_restart')).toMatchObject({
    condition: 'resource_runaway',
    state: 'succeeded',
  });
  expect(leaker.find((i) => i.action === 'terminate')).toMatchObject({
    condition: 'resource_runaway',
    state: 'succeeded',
    incarnation: 2,
  });

  // api-user: llm-api rate-limited → its restart held (then skipped when it moved again), one alert delivered.
  const apiUser = of('api-user-1');
  const restart = apiUser.find((i) => i.action === 'snapshot_and_restart');
  expect(restart?.condition).toBe('progress_stalled');
  expect(restart?.evidence.heldFor).toEqual(expect.any(String));
  expect(restart?.evidence.actedAt).toBeUndefined(); // it never restarted anything
  expect(out.agentEvents.filter((e) => e.agent === 'api-user-1' && e.event === 'started')).toHaveLength(1);
  expect(out.agentEvents.some((e) => e.agent === 'api-user-1' && e.event === 'recovered')).toBe(true);
  expect(apiUser.find((i) => i.action === 'alert')).toMatchObject({
    condition: 'dependency_down',
    state: 'succeeded',
  });
  const firing = out.deliveries.filter((d) => d.kind === 'firing');
  expect(firing.filter((d) => d.condition === 'dependency_down')).toEqual([
    expect.objectContaining({ agentType: 'api-user', severity: 'high' }),
  ]);
  expect(out.alerts.find((a) => a.group.condition === 'dependency_down')?.agentIds).toHaveLength(1);

  // The narrative (stderr with --json).
  const story = r.stderr;
  expect(story).toMatch(/staller-1 stalled \(progress unchanged/);
  expect(story).toMatch(/ladder: send_signal SIGUSR1 → staller-1 \(rung 1, attempt 1\)/);
  expect(story).toContain('wake cured staller-1');
  expect(story).toMatch(/hanger-1 restarted from its snapshot \(step \d+\), incarnation 2/);
  expect(story).toMatch(/restart of api-user-1 held: llm-api is rate_limited/);
  expect(story).toMatch(/alert delivered: \[HIGH\] dependency_down on api-user/);
  expect(story).toMatch(/leaker-1 runaway: RSS \d+ MiB > rss_limit 192 MiB/);
  expect(story).toContain('Interventions');
  expect(story).toContain('Alerts');

  // Everything it started is gone: the supervisor stopped its agents (the frozen one was killed).
  for (const pid of new Set(out.agentEvents.map((e) => e.pid))) expect(alive(pid)).toBe(false);
  expect(await readFile(join(dataDir, 'policies.yaml'), 'utf8')).toContain('agent_type: api-user');
}, 140_000);
