/**
 * `rouse demo` end to end as a child process: it must run by itself, show every failure mode it
 * promises, end with every task in the state the scenario implies, and exit 0.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Task } from '@rouse/protocol';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from './run-cli.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rouse-demo-test-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('rouse demo shows claims, timeouts, retries, fencing, write-back grace and diagnoses, then exits 0', async () => {
  const r = await runCli(
    ['demo', '--json', '--duration', '50s', '--heartbeat-interval', '1s', '--data-dir', join(dir, 'data')],
    {
      cwd: dir,
      timeoutMs: 58_000,
    },
  );
  expect(r.code, r.stderr).toBe(0);
  // The story (on stderr with --json) starts with the dashboard's one-time login URL.
  expect(r.stderr.split('\n')[0]).toMatch(
    /^Dashboard: http:\/\/127\.0\.0\.1:\d+\/login\?once=[A-Za-z0-9_-]+ /,
  );
  const out = JSON.parse(r.stdout) as { tasks: { name: string; task: Task }[]; fencedWrites: number };
  const byName = new Map(out.tasks.map((t) => [t.name, t.task]));
  const get = (name: string): Task => {
    const t = byName.get(name);
    if (!t) throw new Error(`no task ${name} in ${[...byName.keys()].join(', ')}`);
    return t;
  };

  expect(out.tasks.length).toBeGreaterThanOrEqual(20);
  expect(out.fencedWrites).toBe(1);
  // crashed before start → claim timeout → done by a healthy agent on attempt 2
  expect(get('summarize#1')).toMatchObject({ status: 'completed', attempt: 2 });
  // hung → heartbeat timeout → done on attempt 2 (the stale write was fenced)
  expect(get('summarize#2')).toMatchObject({ status: 'completed', attempt: 2 });
  // lost its write-back → completed from the uploaded result, no second attempt
  expect(get('summarize#3')).toMatchObject({ status: 'completed', attempt: 1 });
  expect(get('summarize#3').resultRef).not.toBeNull();
  expect(get('flaky#1')).toMatchObject({ status: 'completed', attempt: 3 });
  expect(get('flaky#3')).toMatchObject({ status: 'failed', final: true, attempt: 1 });
  expect(get('flaky#3').error?.retryable).toBe(false);
  expect(get('flaky#4')).toMatchObject({ status: 'failed', final: true, attempt: 3, maxAttempts: 3 });
  expect(get('summarize#16').status).toBe('cancelled');
  expect(get('translate#1').status).toBe('created');
  expect(get('summarize#17').status).toBe('created');
  for (let n = 4; n <= 15; n++) expect(get(`summarize#${n}`).status).toBe('completed');

  // the narrative (stderr with --json)
  const story = r.stderr;
  expect(story).toMatch(/claimed summarize#1 \(attempt 1\/4/);
  expect(story).toMatch(/summarize#1 timed out: crashy-1 claimed it but never started it/);
  expect(story).toMatch(/summarize#2 timed out: no heartbeat from hangy-1/);
  expect(story).toContain('heartbeat_late');
  expect(story).toContain('awaiting_write_back');
  expect(story).toMatch(/fenced: 409 stale_version/);
  expect(story).toMatch(/retry 2\/4 in 1s \(backoff\)/);
  expect(story).toMatch(/summarize#3 completed by the coordinator/);
  expect(story).toContain('non_retryable_error');
  expect(story).toContain('exhausted_attempts');
  expect(story).toContain('no_agents_for_type');
  expect(story).toContain('scheduled_later');
  expect(story).toContain('Summary');
});
