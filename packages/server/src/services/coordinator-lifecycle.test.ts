import { MAX_INLINE_RESULT_BYTES } from '@rouse/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN, type CoordinatorFixture, createFixture } from '../test-support/coordinator-fixture.js';

let f: CoordinatorFixture;
beforeEach(async () => {
  f = await createFixture();
});
afterEach(async () => {
  await f.close();
});

describe('task lifecycle through the coordinator', () => {
  it('claim → start → heartbeat → complete, with the history and the live events', async () => {
    const agent = await f.register();
    const created = await f.create({ payload: { hello: 'world' } });
    expect(created.id).toMatch(/^tsk_/);
    const claimed = await f.claimOne(agent);
    expect(claimed).toMatchObject({
      id: created.id,
      status: 'claimed',
      version: 1,
      attempt: 1,
      agentId: agent.agentId,
    });
    const started = await f.coordinator.startTask(agent.caller, claimed.id, 1);
    expect(started.status).toBe('running');
    await f.advance(2000);
    const beat = await f.coordinator.agentHeartbeat(agent.caller, agent.agentId, {
      tasks: [{ taskId: claimed.id, version: 1, progress: 0.5, phase: 'work' }],
    });
    expect(beat).toEqual({
      heartbeatIntervalMs: 5000,
      tasks: [{ taskId: claimed.id, ok: true, leaseExpiresAt: f.clock.now() + 15_000 }],
      commands: [],
    });
    const done = await f.coordinator.completeTask(agent.caller, claimed.id, {
      version: 1,
      result: { ok: true },
    });
    expect(done).toMatchObject({ status: 'completed', result: { ok: true }, final: true });
    // Completing again at the same version is idempotent.
    expect(
      (await f.coordinator.completeTask(agent.caller, claimed.id, { version: 1, result: { ok: true } }))
        .status,
    ).toBe('completed');

    const history = await f.coordinator.listTaskEvents(ADMIN, claimed.id);
    expect(history.map((e) => `${e.from}→${e.to}`)).toEqual([
      'null→created',
      'created→claimed',
      'claimed→running',
      'running→completed',
    ]);
    expect(f.events.map((e) => (e.type === 'task.transition' ? `${e.type}:${e.event.to}` : e.type))).toEqual([
      'agent.registered',
      'task.created',
      'task.transition:claimed',
      'task.transition:running',
      'task.progress',
      'task.transition:completed',
    ]);
    expect(f.coordinator.stats().trackedLeases).toBe(0);
  });

  it('claim with start and complete: complete-and-claim-next in one call', async () => {
    const agent = await f.register();
    const [a, b] = (await f.coordinator.createTasks(ADMIN, [{ type: 't' }, { type: 't' }])).map(
      (c) => c.task,
    );
    const first = await f.coordinator.claim(agent.caller, agent.agentId, { types: ['t'], start: true });
    expect(first.tasks.map((t) => [t.id, t.status])).toEqual([[a!.id, 'running']]);
    const next = await f.coordinator.claim(agent.caller, agent.agentId, {
      types: ['t'],
      start: true,
      complete: [
        { taskId: a!.id, version: 1, result: 42 },
        { taskId: 'tsk_missing', version: 1 },
      ],
    });
    expect(next.completed).toEqual([
      { taskId: a!.id, ok: true },
      { taskId: 'tsk_missing', ok: false, code: 'not_found' },
    ]);
    expect(next.tasks.map((t) => t.id)).toEqual([b!.id]);
    expect((await f.task(a!.id)).result).toBe(42);
  });

  it('an inline result over 64 KiB is refused with 413 and says to upload it', async () => {
    const agent = await f.register();
    const t = await f.running(agent);
    const big = 'x'.repeat(MAX_INLINE_RESULT_BYTES);
    await expect(
      f.coordinator.completeTask(agent.caller, t.id, { version: t.version, result: big }),
    ).rejects.toMatchObject({
      code: 'payload_too_large',
      details: { limitBytes: MAX_INLINE_RESULT_BYTES },
      message: expect.stringContaining('PUT /v1/tasks/'),
    });
    const viaClaim = await f.coordinator.claim(agent.caller, agent.agentId, {
      types: ['t'],
      complete: [{ taskId: t.id, version: t.version, result: big }],
    });
    expect(viaClaim.completed).toEqual([{ taskId: t.id, ok: false, code: 'payload_too_large' }]);
    expect((await f.task(t.id)).status).toBe('running');
  });

  it('a stale version cannot complete (409) and changes nothing', async () => {
    const agent = await f.register();
    const t = await f.running(agent);
    await expect(f.coordinator.completeTask(agent.caller, t.id, { version: 0 })).rejects.toMatchObject({
      code: 'stale_version',
      details: { currentVersion: 1 },
    });
    expect((await f.task(t.id)).status).toBe('running');
  });

  it('idempotent create: same key and payload → the same task; different payload → 409', async () => {
    const one = await f.coordinator.createTask(ADMIN, {
      type: 't',
      payload: { a: 1, b: 2 },
      idempotencyKey: 'k1',
    });
    const two = await f.coordinator.createTask(ADMIN, {
      type: 't',
      payload: { b: 2, a: 1 },
      idempotencyKey: 'k1',
    });
    expect(one.deduplicated).toBe(false);
    expect(two).toEqual({ task: one.task, deduplicated: true });
    await expect(
      f.coordinator.createTask(ADMIN, { type: 't', payload: { a: 2 }, idempotencyKey: 'k1' }),
    ).rejects.toMatchObject({
      code: 'idempotency_conflict',
    });
    expect(f.events.filter((e) => e.type === 'task.created')).toHaveLength(1);
  });

  it('rejects bad timing naming the field (and the item in a batch)', async () => {
    await expect(
      f.coordinator.createTask(ADMIN, {
        type: 't',
        timing: { heartbeatIntervalMs: 5000, heartbeatTimeoutMs: 5000 },
      }),
    ).rejects.toThrow(/^timing\.heartbeatTimeoutMs must exceed/);
    await expect(
      f.coordinator.createTasks(ADMIN, [
        { type: 't' },
        { type: 't', timing: { executionTimeoutMs: 1000, attemptDeadlineMs: 1000 } },
      ]),
    ).rejects.toThrow(/^tasks\[1\]\.timing\.attemptDeadlineMs must exceed/);
  });

  it('backoff 1 s, 2 s, 4 s between failed attempts, then final after maxAttempts', async () => {
    const agent = await f.register();
    const created = await f.create();
    const gaps: (number | null)[] = [];
    for (let attempt = 1; attempt <= 4; attempt++) {
      const t = await f.claimOne(agent);
      expect(t.attempt).toBe(attempt);
      await f.coordinator.startTask(agent.caller, t.id, t.version);
      const failed = await f.coordinator.failTask(agent.caller, t.id, {
        version: t.version,
        error: { code: 'boom', message: 'x' },
      });
      gaps.push(failed.nextAttemptAt === null ? null : failed.nextAttemptAt - f.clock.now());
      if (failed.nextAttemptAt === null) break;
      // Not claimable one ms before the backoff ends.
      await f.advance(failed.nextAttemptAt - f.clock.now() - 1);
      expect((await f.coordinator.claim(agent.caller, agent.agentId, { types: ['t'] })).tasks).toEqual([]);
      await f.advance(1);
    }
    expect(gaps).toEqual([1000, 2000, 4000, null]);
    const last = await f.task(created.id);
    expect(last).toMatchObject({ status: 'failed', final: true, attempt: 4 });
  });

  it('a non-retryable failure is final at once', async () => {
    const agent = await f.register();
    const t = await f.running(agent);
    const failed = await f.coordinator.failTask(agent.caller, t.id, {
      version: t.version,
      error: { code: 'bad', message: 'no', retryable: false },
    });
    expect(failed).toMatchObject({ status: 'failed', final: true, nextAttemptAt: null });
  });

  it('manual retry of a final task makes it claimable now and wakes a waiting claim', async () => {
    const agent = await f.register();
    const t = await f.running(agent, { maxAttempts: 1 });
    await f.coordinator.failTask(agent.caller, t.id, {
      version: t.version,
      error: { code: 'e', message: 'm' },
    });
    const waiting = f.coordinator.claim(agent.caller, agent.agentId, { types: ['t'], waitMs: 10_000 });
    await f.advance(100);
    await f.coordinator.retryTask(ADMIN, t.id);
    const r = await waiting;
    expect(r.tasks.map((x) => [x.id, x.attempt])).toEqual([[t.id, 2]]);
  });

  it('checkpoint and session go to the next attempt of a resumable task', async () => {
    const agent = await f.register();
    const t = await f.running(agent, { resumable: true });
    await f.coordinator.checkpointTask(agent.caller, t.id, {
      version: t.version,
      state: { step: 3 },
      session: { thread: 'th_1' },
    });
    await f.coordinator.failTask(agent.caller, t.id, {
      version: t.version,
      error: { code: 'e', message: 'm' },
    });
    await f.advance(1000);
    const again = await f.claimOne(agent);
    expect(again).toMatchObject({ attempt: 2, checkpoint: { step: 3 }, session: { thread: 'th_1' } });
  });

  it('logs: append, read, and a follower woken by new lines', async () => {
    const agent = await f.register();
    const t = await f.running(agent);
    const ac = new AbortController();
    let woke = false;
    const follow = f.coordinator.waitForLogs(t.id, 0, ac.signal).then(() => {
      woke = true;
    });
    await f.advance(1);
    expect(woke).toBe(false);
    const r = await f.coordinator.appendLogs(agent.caller, t.id, {
      version: t.version,
      lines: [{ text: 'one' }, { stream: 'stderr', text: 'two' }],
    });
    expect(r).toEqual({ accepted: 2, truncated: false });
    await follow;
    expect(woke).toBe(true);
    const logs = await f.coordinator.readLogs(ADMIN, t.id, 0);
    expect(logs.lines.map((l) => [l.seq, l.stream, l.text, l.attempt])).toEqual([
      [1, 'stdout', 'one', 1],
      [2, 'stderr', 'two', 1],
    ]);
    expect((await f.coordinator.readLogs(ADMIN, t.id, 1)).lines.map((l) => l.text)).toEqual(['two']);
    await expect(f.coordinator.readLogs(ADMIN, 'tsk_nope', 0)).rejects.toMatchObject({ code: 'not_found' });
  });
});
