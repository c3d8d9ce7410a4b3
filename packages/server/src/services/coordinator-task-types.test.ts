/** Task timing defaults per task type from the policy file (`task_types:`), applied at creation. */
import { afterEach, describe, expect, it } from 'vitest';
import { parsePolicies } from '../core/policies/load-policies.js';
import { type CoordinatorFixture, createFixture } from '../test-support/coordinator-fixture.js';
import { fixedPolicies } from './policy-registry.js';

let f: CoordinatorFixture;
afterEach(async () => {
  await f.close();
});

const FILE = `
task_types:
  review: { heartbeat_interval: 2s, timeout_factor: 4, stall_timeout: 1m, claim_timeout: 10s, max_attempts: 7,
            backoff: { base: 10s, cap: 1m } }
  report: { expected_duration: { min: 20s, max: 10m } }
`;

async function fixture() {
  const parsed = parsePolicies(FILE, 'p.yaml');
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return createFixture({ policies: fixedPolicies(parsed.set) });
}

describe('task_types defaults', () => {
  it('a task created without its own timing gets its type’s', async () => {
    f = await fixture();
    const t = await f.create({ type: 'review' });
    expect(t.maxAttempts).toBe(7);
    expect(t.timing).toMatchObject({
      heartbeatIntervalMs: 2000,
      heartbeatTimeoutMs: 8000,
      claimTimeoutMs: 10_000,
      stallTimeoutMs: 60_000,
    });
    const r = await f.create({ type: 'report' });
    expect(r.timing).toMatchObject({
      heartbeatIntervalMs: 2000, // clamp(min / 10, 1 s, 60 s)
      executionTimeoutMs: 900_000, // 1.5 × max
      attemptDeadlineMs: 1_350_000,
    });
  });

  it('the task’s own fields win, field by field; other types get the coordinator defaults', async () => {
    f = await fixture();
    const t = await f.create({ type: 'review', maxAttempts: 2, timing: { heartbeatIntervalMs: 500 } });
    expect(t.maxAttempts).toBe(2);
    expect(t.timing).toMatchObject({
      heartbeatIntervalMs: 500,
      heartbeatTimeoutMs: 2000,
      stallTimeoutMs: 60_000,
    });
    // An expected duration of its own replaces the type's interval.
    const e = await f.create({
      type: 'review',
      timing: { expectedDurationMs: { min: 50_000, max: 100_000 } },
    });
    expect(e.timing).toMatchObject({
      heartbeatIntervalMs: 5000,
      heartbeatTimeoutMs: 20_000,
      executionTimeoutMs: 150_000,
    });
    const other = await f.create({ type: 'other' });
    expect(other.timing.backoff).toBeUndefined();
    expect(other.maxAttempts).toBe(4);
    expect(other.timing).toMatchObject({
      heartbeatIntervalMs: 5000,
      heartbeatTimeoutMs: 15_000,
      stallTimeoutMs: 300_000,
    });
  });

  it('a task of the type retries with the type’s backoff, after a failure and after a lease expiry', async () => {
    f = await fixture();
    const agent = await f.register(['review']);
    const running = await f.running(agent, { type: 'review' });
    expect(running.timing.backoff).toEqual({ baseMs: 10_000, capMs: 60_000, jitter: 0 });
    const failed = await f.coordinator.failTask(agent.caller, running.id, {
      version: running.version,
      error: { code: 'x', message: 'boom' },
    });
    // 10 s after the first attempt, not the coordinator's 1 s.
    expect(failed.nextAttemptAt! - f.clock.now()).toBe(10_000);
    await f.advance(10_000);
    const second = await f.claimOne(agent, { types: ['review'] });
    await f.coordinator.startTask(agent.caller, second.id, second.version);
    await f.advance(8000); // its heartbeat timeout (2 s × 4) passes
    const expired = await f.task(second.id);
    expect(expired.status).toBe('timeout');
    expect(expired.nextAttemptAt! - f.clock.now()).toBe(20_000);
  });
});
