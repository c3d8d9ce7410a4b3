import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN, type CoordinatorFixture, createFixture } from '../test-support/coordinator-fixture.js';

let f: CoordinatorFixture;
beforeEach(async () => {
  f = await createFixture();
});
afterEach(async () => {
  await f.close();
});

describe('long-poll claims', () => {
  it('return the moment a task is created, not at the end of the wait', async () => {
    const agent = await f.register();
    let done = false;
    const waiting = f.coordinator
      .claim(agent.caller, agent.agentId, { types: ['t'], waitMs: 20_000 })
      .then((r) => {
        done = true;
        return r;
      });
    await f.advance(5000);
    expect(done).toBe(false);
    const t = await f.create();
    const r = await waiting;
    expect(r.tasks.map((x) => x.id)).toEqual([t.id]);
    expect(f.clock.now()).toBe(1_700_000_005_000);
  });

  it('return empty after waitMs without work', async () => {
    const agent = await f.register();
    const waiting = f.coordinator.claim(agent.caller, agent.agentId, { types: ['t'], waitMs: 2000 });
    await f.advance(2000);
    expect(await waiting).toEqual({ tasks: [] });
    expect(f.coordinator.stats().waitingClaims).toBe(0);
  });

  it('wake when runAt is reached', async () => {
    const agent = await f.register();
    const t = await f.create({ runAt: f.clock.now() + 3000 });
    let done = false;
    const waiting = f.coordinator
      .claim(agent.caller, agent.agentId, { types: ['t'], waitMs: 20_000 })
      .then((r) => {
        done = true;
        return r;
      });
    await f.advance(2999);
    expect(done).toBe(false);
    await f.advance(1);
    expect((await waiting).tasks.map((x) => x.id)).toEqual([t.id]);
  });

  it('wake for a runAt task created before the claim started waiting (read from the store)', async () => {
    const agent = await f.register();
    const t = await f.create({ runAt: f.clock.now() + 3000 });
    const b = await f.restart(); // a coordinator that never saw the create
    const waiting = b.claim(agent.caller, agent.agentId, { types: ['t'], waitMs: 20_000 });
    await f.advance(3000);
    expect((await waiting).tasks.map((x) => x.id)).toEqual([t.id]);
  });

  it('wake for a task requeued after a failure once its backoff passes', async () => {
    const a = await f.register();
    const b = await f.register();
    const t = await f.running(a);
    const waiting = f.coordinator.claim(b.caller, b.agentId, { types: ['t'], waitMs: 20_000 });
    await f.advance(10);
    await f.coordinator.failTask(a.caller, t.id, { version: t.version, error: { code: 'e', message: 'm' } });
    await f.advance(999);
    expect(f.coordinator.stats().waitingClaims).toBe(1);
    await f.advance(1);
    expect((await waiting).tasks.map((x) => [x.id, x.agentId])).toEqual([[t.id, b.agentId]]);
  });

  it('wake waiters in FIFO order and only as many as there are tasks', async () => {
    const agents = [await f.register(), await f.register(), await f.register()];
    const got: string[] = [];
    const polls = agents.map((a) =>
      f.coordinator.claim(a.caller, a.agentId, { types: ['t'], waitMs: 5000 }).then((r) => {
        if (r.tasks.length > 0) got.push(a.agentId);
        return r;
      }),
    );
    await f.advance(10);
    await f.create();
    await f.advance(0);
    expect(got).toEqual([agents[0]!.agentId]);
    await f.create();
    await f.advance(0);
    expect(got).toEqual([agents[0]!.agentId, agents[1]!.agentId]);
    await f.advance(5000);
    await Promise.all(polls);
  });

  it('an aborted claim returns empty at once and claims nothing', async () => {
    const agent = await f.register();
    const ac = new AbortController();
    const waiting = f.coordinator.claim(
      agent.caller,
      agent.agentId,
      { types: ['t'], waitMs: 20_000 },
      ac.signal,
    );
    await f.advance(10);
    ac.abort();
    expect(await waiting).toEqual({ tasks: [] });
    const t = await f.create();
    expect((await f.task(t.id)).status).toBe('created');
  });

  it('stop() ends every long-poll', async () => {
    const agent = await f.register();
    const waiting = f.coordinator.claim(agent.caller, agent.agentId, { types: ['t'], waitMs: 20_000 });
    await f.advance(10);
    await f.coordinator.stop();
    expect(await waiting).toEqual({ tasks: [] });
  });

  it('orders by priority, then age', async () => {
    const agent = await f.register();
    const low = await f.create({ priority: 0 });
    const high = await f.create({ priority: 5 });
    const low2 = await f.create({ priority: 0 });
    const r = await f.coordinator.claim(agent.caller, agent.agentId, { types: ['t'], max: 3 });
    expect(r.tasks.map((t) => t.id)).toEqual([high.id, low.id, low2.id]);
  });
});

describe('leave', () => {
  it('releases held tasks at once, without backoff, to a waiting agent', async () => {
    const leaving = await f.register();
    const other = await f.register();
    const t = await f.running(leaving);
    const waiting = f.coordinator.claim(other.caller, other.agentId, { types: ['t'], waitMs: 20_000 });
    await f.advance(10);
    await f.coordinator.leave(leaving.caller, leaving.agentId);
    const r = await waiting;
    expect(r.tasks.map((x) => [x.id, x.attempt])).toEqual([[t.id, 2]]);
    expect(f.clock.now()).toBe(1_700_000_000_010);
    expect((await f.coordinator.getAgent(ADMIN, leaving.agentId)).status).toBe('left');
    // Its token no longer authenticates.
    expect(await f.coordinator.authenticate(leaving.token)).toBeNull();
    expect(f.coordinator.stats().trackedLeases).toBe(1);
  });

  it('ends the leaving agent’s own long-poll: it claims nothing afterwards', async () => {
    const leaving = await f.register();
    const own = f.coordinator.claim(leaving.caller, leaving.agentId, { types: ['t'], waitMs: 20_000 });
    await f.advance(10);
    await f.coordinator.leave(leaving.caller, leaving.agentId);
    const t = await f.create();
    expect((await own).tasks).toEqual([]);
    await f.advance(20_000);
    expect((await f.task(t.id)).status).toBe('created');
  });
});

describe('dependencies', () => {
  it('a task requiring a down dependency is not dispatched; the diagnosis says why; recovery wakes the claim', async () => {
    const agent = await f.register();
    await f.coordinator.agentHeartbeat(agent.caller, agent.agentId, {
      dependencies: [{ name: 'openai', state: 'down' }],
    });
    const blocked = await f.create({ requires: ['openai'] });
    const free = await f.create();
    const first = await f.coordinator.claim(agent.caller, agent.agentId, { types: ['t'], max: 5 });
    expect(first.tasks.map((t) => t.id)).toEqual([free.id]);
    const why = await f.coordinator.diagnose(ADMIN, blocked.id);
    expect(why.reasons[0]).toMatchObject({
      code: 'dependency_unavailable',
      details: { name: 'openai', state: 'down', reportedBy: `agent:${agent.agentId}` },
    });
    expect(await f.coordinator.listDependencies(ADMIN)).toMatchObject([{ name: 'openai', state: 'down' }]);

    const waiting = f.coordinator.claim(agent.caller, agent.agentId, { types: ['t'], waitMs: 20_000 });
    await f.advance(100);
    await f.coordinator.reportDependency(ADMIN, { name: 'openai', state: 'up' });
    expect((await waiting).tasks.map((t) => t.id)).toEqual([blocked.id]);
  });

  it('rate_limited with retryAfterMs blocks until then', async () => {
    const agent = await f.register();
    await f.coordinator.reportDependency(agent.caller, {
      name: 'llm',
      state: 'rate_limited',
      retryAfterMs: 20_000,
    });
    const t = await f.create({ requires: ['llm'] });
    const waiting = f.coordinator.claim(agent.caller, agent.agentId, { types: ['t'], waitMs: 30_000 });
    await f.advance(19_999);
    expect((await f.task(t.id)).status).toBe('created');
    await f.advance(1);
    expect((await waiting).tasks.map((x) => x.id)).toEqual([t.id]);
  });
});
