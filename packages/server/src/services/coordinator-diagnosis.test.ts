import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN, type CoordinatorFixture, createFixture } from '../test-support/coordinator-fixture.js';

let f: CoordinatorFixture;
beforeEach(async () => {
  f = await createFixture();
});
afterEach(async () => {
  await f.close();
});

const why = async (id: string) => (await f.coordinator.diagnose(ADMIN, id)).reasons.map((r) => r.code);

describe('diagnosis through the coordinator', () => {
  it('no agents, then agents not polling, then claimable, then queued behind', async () => {
    const first = await f.create();
    const second = await f.create();
    expect(await why(first.id)).toEqual(['no_agents_for_type']);
    const agent = await f.register();
    expect(await why(first.id)).toEqual(['agents_not_polling']);
    // An agent that serves "t" and asks for work (for any of its types) counts as polling.
    await f.coordinator.claim(agent.caller, agent.agentId, { types: ['other'], waitMs: 0 });
    expect(await why(first.id)).toEqual(['claimable_now']);
    const d = await f.coordinator.diagnose(ADMIN, second.id);
    expect(d.reasons.map((r) => r.code)).toEqual(['queued_behind']);
    expect(d.reasons[0]!.details).toMatchObject({ ahead: 1 });
    await f.advance(60_001);
    expect(await why(first.id)).toEqual(['agents_not_polling']);
  });

  it('agents busy: the only polling agent holds a task and is not waiting', async () => {
    const agent = await f.register();
    await f.running(agent);
    const t = await f.create();
    expect(await why(t.id)).toEqual(['agents_busy']);
    const waiting = f.coordinator.claim(agent.caller, agent.agentId, {
      types: ['nothing-here'],
      waitMs: 5000,
    });
    await f.advance(1);
    await f.advance(5000);
    await waiting;
  });

  it('claimed_not_started, heartbeat_late, progress_stalled, running_normally', async () => {
    const agent = await f.register();
    await f.create({ timing: { stallTimeoutMs: 20_000 } });
    const claimed = await f.claimOne(agent);
    const d = await f.coordinator.diagnose(ADMIN, claimed.id);
    expect(d.reasons[0]).toMatchObject({ code: 'claimed_not_started', details: { expiresInMs: 30_000 } });
    await f.coordinator.startTask(agent.caller, claimed.id, claimed.version);
    expect(await why(claimed.id)).toEqual(['running_normally']);
    await f.advance(8000);
    const late = await f.coordinator.diagnose(ADMIN, claimed.id);
    expect(late.reasons[0]).toMatchObject({ code: 'heartbeat_late', details: { lateByMs: 3000 } });
    // Heartbeats keep coming but progress does not move.
    for (let i = 0; i < 5; i++) {
      await f.coordinator.heartbeatTask(agent.caller, claimed.id, {
        version: claimed.version,
        progress: 0.1,
      });
      await f.advance(4000);
    }
    const stalled = await f.coordinator.diagnose(ADMIN, claimed.id);
    expect(stalled.reasons.map((r) => r.code)).toEqual(['progress_stalled']);
    expect(stalled.reasons[0]!.details.unchangedForMs).toBe(20_000);
    await f.coordinator.heartbeatTask(agent.caller, claimed.id, { version: claimed.version, progress: 0.2 });
    expect(await why(claimed.id)).toEqual(['running_normally']);
  });

  it('backoff_wait, then exhausted_attempts; non_retryable_error; scheduled_later; cancelled; completed', async () => {
    const agent = await f.register();
    const t = await f.running(agent, { maxAttempts: 2 });
    await f.coordinator.failTask(agent.caller, t.id, {
      version: t.version,
      error: { code: 'flaky', message: 'try again' },
    });
    const d = await f.coordinator.diagnose(ADMIN, t.id);
    expect(d.reasons[0]).toMatchObject({
      code: 'backoff_wait',
      details: { inMs: 1000, attempt: 1, lastError: { code: 'flaky' } },
    });
    await f.advance(1000);
    const again = await f.claimOne(agent);
    await f.coordinator.startTask(agent.caller, again.id, again.version);
    await f.coordinator.failTask(agent.caller, again.id, {
      version: again.version,
      error: { code: 'flaky', message: 'again' },
    });
    const final = await f.coordinator.diagnose(ADMIN, t.id);
    expect(final.reasons.map((r) => r.code)).toEqual(['exhausted_attempts']);
    expect(final.suggestions).toContain(`run it once more: rouse retry ${t.id}`);

    const bad = await f.running(agent);
    await f.coordinator.failTask(agent.caller, bad.id, {
      version: bad.version,
      error: { code: 'bad', message: 'no', retryable: false },
    });
    expect(await why(bad.id)).toEqual(['non_retryable_error']);

    const later = await f.create({ runAt: f.clock.now() + 60_000 });
    expect(await why(later.id)).toEqual(['scheduled_later']);
    await f.coordinator.cancelTask(ADMIN, later.id, 'changed my mind');
    const c = await f.coordinator.diagnose(ADMIN, later.id);
    expect(c.reasons[0]).toMatchObject({
      code: 'cancelled',
      details: { reason: 'changed my mind', actor: 'admin' },
    });

    const ok = await f.running(agent);
    await f.coordinator.completeTask(agent.caller, ok.id, { version: ok.version });
    expect(await why(ok.id)).toEqual(['completed']);
  });

  it('unknown task → not_found', async () => {
    await expect(f.coordinator.diagnose(ADMIN, 'tsk_nope')).rejects.toMatchObject({ code: 'not_found' });
  });
});
