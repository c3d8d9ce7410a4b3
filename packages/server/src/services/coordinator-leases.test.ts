import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN, type CoordinatorFixture, createFixture } from '../test-support/coordinator-fixture.js';

let f: CoordinatorFixture;
afterEach(async () => {
  await f.close();
});

describe('exact lease expiry', () => {
  it("a silent agent's task turns timeout exactly heartbeatTimeoutMs after its last heartbeat", async () => {
    f = await createFixture();
    const agent = await f.register();
    const t = await f.running(agent);
    await f.advance(3000);
    await f.coordinator.agentHeartbeat(agent.caller, agent.agentId, {
      tasks: [{ taskId: t.id, version: t.version }],
    });
    const lastBeatAt = f.clock.now();
    await f.advance(14_999);
    expect((await f.task(t.id)).status).toBe('running');
    await f.advance(1);
    const after = await f.task(t.id);
    expect(after).toMatchObject({ status: 'timeout', nextAttemptAt: lastBeatAt + 15_000 + 1000 });
    const events = await f.coordinator.listTaskEvents(ADMIN, t.id);
    expect(events.at(-1)).toMatchObject({
      to: 'timeout',
      at: lastBeatAt + 15_000,
      reason: 'heartbeat_timeout',
      actor: 'coordinator',
    });
  });

  it('the timed-out task is claimable again after its backoff, and a waiting claim gets it then', async () => {
    f = await createFixture();
    const dead = await f.register();
    const healthy = await f.register();
    const t = await f.running(dead);
    const waiting = f.coordinator.claim(healthy.caller, healthy.agentId, { types: ['t'], waitMs: 60_000 });
    await f.advance(15_000);
    expect((await f.task(t.id)).status).toBe('timeout');
    await f.advance(999);
    expect(f.coordinator.stats().waitingClaims).toBe(1);
    await f.advance(1);
    const r = await waiting;
    expect(r.tasks.map((x) => [x.id, x.attempt, x.agentId])).toEqual([[t.id, 2, healthy.agentId]]);
  });

  it('claim timeout: claimed but never started', async () => {
    f = await createFixture();
    const agent = await f.register();
    await f.create({ timing: { claimTimeoutMs: 5000 } });
    const t = await f.claimOne(agent);
    await f.advance(4999);
    expect((await f.task(t.id)).status).toBe('claimed');
    await f.advance(1);
    const events = await f.coordinator.listTaskEvents(ADMIN, t.id);
    expect(events.at(-1)).toMatchObject({ from: 'claimed', to: 'timeout', reason: 'claim_timeout' });
  });

  it('attempt deadline: heartbeats do not keep an attempt alive past attemptDeadlineMs', async () => {
    f = await createFixture();
    const agent = await f.register();
    // executionTimeoutMs 10 s → attemptDeadlineMs 15 s; heartbeats every 2 s (timeout 6 s).
    const t = await f.running(agent, { timing: { heartbeatIntervalMs: 2000, executionTimeoutMs: 10_000 } });
    for (let i = 0; i < 7; i++) {
      await f.advance(2000);
      const r = await f.coordinator.heartbeatTask(agent.caller, t.id, { version: t.version });
      expect(r.ok).toBe(true);
    }
    expect((await f.task(t.id)).status).toBe('running');
    await f.advance(999);
    expect((await f.task(t.id)).status).toBe('running');
    await f.advance(1);
    const events = await f.coordinator.listTaskEvents(ADMIN, t.id);
    expect(events.at(-1)).toMatchObject({
      to: 'timeout',
      reason: 'attempt_deadline',
      at: t.startedAt! + 15_000,
    });
  });

  it('after maxAttempts timeouts the task is final', async () => {
    f = await createFixture();
    const agent = await f.register();
    const created = await f.create({ maxAttempts: 2 });
    await f.coordinator.startTask(agent.caller, created.id, (await f.claimOne(agent)).version);
    await f.advance(15_000);
    await f.advance(1000);
    const second = await f.claimOne(agent);
    await f.coordinator.startTask(agent.caller, second.id, second.version);
    await f.advance(15_000);
    expect(await f.task(created.id)).toMatchObject({
      status: 'timeout',
      final: true,
      attempt: 2,
      nextAttemptAt: null,
    });
  });

  it('the safety sweep expires an overdue lease the timers never saw', async () => {
    f = await createFixture();
    const agent = await f.register();
    const created = await f.create();
    // Claim straight through the store: no timer is armed for this lease.
    const [claimed] = await f.store.claimTasks({
      agentId: agent.agentId,
      types: ['t'],
      max: 1,
      start: true,
      backoff: f.coordinator.options.backoff,
    });
    expect(claimed!.task.id).toBe(created.id);
    expect(f.coordinator.stats().trackedLeases).toBe(0);
    await f.advance(15_000);
    expect((await f.task(created.id)).status).toBe('running');
    await f.advance(1000); // the next sweep
    expect((await f.task(created.id)).status).toBe('timeout');
  });
});

describe('restart grace', () => {
  it('leases loaded after a restart get one heartbeat timeout of grace; a heartbeat in the grace renews', async () => {
    f = await createFixture();
    const agent = await f.register();
    const quiet = await f.running(agent);
    const beating = await f.running(agent);
    const startedAt = f.clock.now();
    // Coordinator A dies; time passes beyond both leases while nobody is watching.
    await f.coordinator.stop();
    f.clock.set(startedAt + 20_000);
    const b = await f.restart();
    const restartedAt = f.clock.now();
    await f.advance(5000);
    // Inside the grace: the agent reaches coordinator B and renews one of its tasks.
    const beat = await b.agentHeartbeat(agent.caller, agent.agentId, {
      tasks: [{ taskId: beating.id, version: beating.version }],
    });
    expect(beat.tasks[0]).toMatchObject({ ok: true });
    await f.advance(9999);
    expect((await b.getTask(ADMIN, quiet.id)).status).toBe('running');
    await f.advance(1);
    expect((await b.getTask(ADMIN, quiet.id)).status).toBe('timeout');
    const events = await b.listTaskEvents(ADMIN, quiet.id);
    expect(events.at(-1)!.at).toBe(restartedAt + 15_000);
    expect((await b.getTask(ADMIN, beating.id)).status).toBe('running');
    await f.advance(5000);
    expect((await b.getTask(ADMIN, beating.id)).status).toBe('timeout');
  });

  it('restartGraceMs overrides the per-task grace', async () => {
    f = await createFixture();
    const agent = await f.register();
    const t = await f.running(agent);
    await f.coordinator.stop();
    f.clock.set(f.clock.now() + 60_000);
    const b = await f.restart({ restartGraceMs: 2000 });
    await f.advance(1999);
    expect((await b.getTask(ADMIN, t.id)).status).toBe('running');
    await f.advance(1);
    expect((await b.getTask(ADMIN, t.id)).status).toBe('timeout');
  });
});

describe('write-back grace', () => {
  it('executionDone keeps the task alive for the grace, then completes it from the uploaded result', async () => {
    f = await createFixture({ writeBackGraceMs: 30_000 });
    const agent = await f.register();
    const t = await f.running(agent);
    const ref = await f.coordinator.uploadResult(
      agent.caller,
      t.id,
      t.version,
      'application/json',
      Readable.from([Buffer.from('{"big":true}')]),
    );
    expect(ref).toMatchObject({ sizeBytes: 12 });
    expect(ref.key.startsWith(`${t.id}/${t.version}-`)).toBe(true);
    const beat = await f.coordinator.agentHeartbeat(agent.caller, agent.agentId, {
      tasks: [{ taskId: t.id, version: t.version, executionDone: true }],
    });
    expect(beat.tasks[0]!.leaseExpiresAt).toBe(f.clock.now() + 30_000);
    // The agent never writes back. Past the normal heartbeat timeout it is still alive…
    await f.advance(29_999);
    expect(await f.task(t.id)).toMatchObject({ status: 'running', executionDone: true });
    const why = await f.coordinator.diagnose(ADMIN, t.id);
    expect(why.reasons[0]).toMatchObject({
      code: 'awaiting_write_back',
      details: { hasUploadedResult: true },
    });
    // …and at the end of the grace it completes from the blob.
    await f.advance(1);
    const done = await f.task(t.id);
    expect(done).toMatchObject({ status: 'completed', resultRef: ref });
    const events = await f.coordinator.listTaskEvents(ADMIN, t.id);
    expect(events.at(-1)).toMatchObject({ to: 'completed', reason: 'completed_from_result_ref' });
    const result = await f.coordinator.getResult(ADMIN, t.id);
    const chunks: Buffer[] = [];
    for await (const c of result.blob!.stream) chunks.push(Buffer.from(c as Buffer));
    expect(Buffer.concat(chunks).toString()).toBe('{"big":true}');
  });

  it('without an uploaded result the task times out at the end of the grace', async () => {
    f = await createFixture({ writeBackGraceMs: 30_000 });
    const agent = await f.register();
    const t = await f.running(agent);
    await f.coordinator.heartbeatTask(agent.caller, t.id, { version: t.version, executionDone: true });
    await f.advance(29_999);
    expect((await f.task(t.id)).status).toBe('running');
    await f.advance(1);
    expect((await f.task(t.id)).status).toBe('timeout');
  });

  it('an upload by a stale holder is refused before any bytes are stored', async () => {
    f = await createFixture();
    const agent = await f.register();
    const t = await f.running(agent);
    await expect(
      f.coordinator.uploadResult(agent.caller, t.id, t.version + 1, 'text/plain', Buffer.from('x')),
    ).rejects.toMatchObject({
      code: 'stale_version',
    });
    await expect(f.coordinator.getResult(ADMIN, t.id)).rejects.toMatchObject({ code: 'not_found' });
  });
  it('a repeated upload after completion is refused and leaves the stored result intact', async () => {
    f = await createFixture();
    const agent = await f.register();
    const t = await f.running(agent);
    const upload = (text: string) =>
      f.coordinator.uploadResult(agent.caller, t.id, t.version, 'text/plain', Buffer.from(text));
    // An upload replaced by a second one of the same attempt: only the second is kept.
    await upload('draft');
    await upload('final');
    await f.coordinator.completeTask(agent.caller, t.id, { version: t.version });
    // A spooled report re-delivers the upload after the completion was accepted.
    await expect(upload('final')).rejects.toMatchObject({ code: 'invalid_transition' });
    const done = await f.task(t.id);
    expect(done.status).toBe('completed');
    const result = await f.coordinator.getResult(ADMIN, t.id);
    const chunks: Buffer[] = [];
    for await (const c of result.blob!.stream) chunks.push(Buffer.from(c as Buffer));
    expect(Buffer.concat(chunks).toString()).toBe('final');
  });
});
