import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ADMIN,
  type CoordinatorFixture,
  createFixture,
  ENROLLMENT,
  READONLY,
  TOKENS,
} from '../test-support/coordinator-fixture.js';
import { AGENT_TOKEN_CACHE_MS, hashToken } from './auth.js';

let f: CoordinatorFixture;
beforeEach(async () => {
  f = await createFixture();
});
afterEach(async () => {
  await f.close();
});

describe('authentication', () => {
  it('maps the static tokens and agent tokens to callers; anything else is null', async () => {
    const agent = await f.register();
    expect(await f.coordinator.authenticate(TOKENS.admin)).toEqual({ kind: 'admin' });
    expect(await f.coordinator.authenticate(TOKENS.enrollment)).toEqual({ kind: 'enrollment' });
    expect(await f.coordinator.authenticate(TOKENS.readonly)).toEqual({ kind: 'readonly' });
    expect(await f.coordinator.authenticate(agent.token)).toEqual(agent.caller);
    expect(await f.coordinator.authenticate(`${TOKENS.admin}x`)).toBeNull();
    expect(await f.coordinator.authenticate('')).toBeNull();
    expect(await f.coordinator.authenticate('rsa_unknown')).toBeNull();
  });

  it('an agent token is trusted for a while without a lookup; leave through this coordinator ends it at once', async () => {
    const a = await f.register();
    const b = await f.register();
    expect(await f.coordinator.authenticate(a.token)).toEqual(a.caller);
    expect(await f.coordinator.authenticate(b.token)).toEqual(b.caller);
    // Left through another coordinator (straight in the store): still trusted here until the TTL ends.
    await f.store.endAgent({ agentId: a.agentId, lifecycle: 'left', reason: 'left elsewhere' });
    expect(await f.coordinator.authenticate(a.token)).toEqual(a.caller);
    f.clock.advance(AGENT_TOKEN_CACHE_MS);
    expect(await f.coordinator.authenticate(a.token)).toBeNull();
    // Left through this one: refused at once.
    await f.coordinator.leave(b.caller, b.agentId);
    expect(await f.coordinator.authenticate(b.token)).toBeNull();
  });

  it('a heartbeat the store accepts renews the token: a beating agent is looked up once', async () => {
    const a = await f.register();
    const lookups = vi.spyOn(f.store, 'resolveAgentToken');
    // As the HTTP routes do: authenticate each request, then handle it.
    for (let i = 0; i < 12; i++) {
      const caller = await f.coordinator.authenticate(a.token);
      expect(caller).toEqual(a.caller);
      await f.coordinator.agentHeartbeat(a.caller, a.agentId, {});
      f.clock.advance(5000);
    }
    expect(lookups).toHaveBeenCalledTimes(1);
    // Ended through another coordinator: its heartbeats are refused and renew nothing.
    await f.store.endAgent({ agentId: a.agentId, lifecycle: 'left', reason: 'left elsewhere' });
    await expect(f.coordinator.agentHeartbeat(a.caller, a.agentId, {})).rejects.toMatchObject({
      code: 'unauthorized',
    });
    f.clock.advance(AGENT_TOKEN_CACHE_MS);
    expect(await f.coordinator.authenticate(a.token)).toBeNull();
  });

  it('agent tokens are random, prefixed, and stored only as their sha256', async () => {
    const a = await f.register();
    const b = await f.register();
    expect(a.token).toMatch(/^rsa_[A-Za-z0-9_-]{43}$/);
    expect(a.token).not.toBe(b.token);
    expect((await f.store.resolveAgentToken(hashToken(a.token)))?.agentId).toBe(a.agentId);
    expect(await f.store.resolveAgentToken(a.token)).toBeNull();
  });
});

describe('authorization', () => {
  it("an agent cannot write to another agent's task (403) and nothing changes", async () => {
    const a = await f.register();
    const b = await f.register();
    const t = await f.running(a);
    const v = t.version;
    await expect(f.coordinator.completeTask(b.caller, t.id, { version: v })).rejects.toMatchObject({
      code: 'forbidden',
    });
    await expect(
      f.coordinator.failTask(b.caller, t.id, { version: v, error: { code: 'x', message: 'y' } }),
    ).rejects.toMatchObject({ code: 'forbidden' });
    await expect(f.coordinator.heartbeatTask(b.caller, t.id, { version: v })).rejects.toMatchObject({
      code: 'forbidden',
    });
    await expect(
      f.coordinator.checkpointTask(b.caller, t.id, { version: v, state: 1 }),
    ).rejects.toMatchObject({ code: 'forbidden' });
    await expect(
      f.coordinator.appendLogs(b.caller, t.id, { version: v, lines: [{ text: 'x' }] }),
    ).rejects.toMatchObject({ code: 'forbidden' });
    await expect(
      f.coordinator.uploadResult(b.caller, t.id, v, 'text/plain', Buffer.from('x')),
    ).rejects.toMatchObject({ code: 'forbidden' });
    const beat = await f.coordinator.agentHeartbeat(b.caller, b.agentId, {
      tasks: [{ taskId: t.id, version: v }],
    });
    expect(beat.tasks).toEqual([{ taskId: t.id, ok: false, code: 'forbidden' }]);
    expect(await f.task(t.id)).toMatchObject({ status: 'running', agentId: a.agentId, checkpoint: null });
  });

  it('an agent acts only as itself: claim, heartbeat and leave as another agent are 403', async () => {
    const a = await f.register();
    const b = await f.register();
    await f.create();
    await expect(f.coordinator.claim(a.caller, b.agentId, { types: ['t'] })).rejects.toMatchObject({
      code: 'forbidden',
    });
    await expect(f.coordinator.agentHeartbeat(a.caller, b.agentId, {})).rejects.toMatchObject({
      code: 'forbidden',
    });
    await expect(f.coordinator.leave(a.caller, b.agentId)).rejects.toMatchObject({ code: 'forbidden' });
    expect((await f.coordinator.listTasks(ADMIN, {})).tasks[0]!.status).toBe('created');
  });

  it('agents may read but not create, cancel, retry or send commands', async () => {
    const a = await f.register();
    const t = await f.create();
    expect((await f.coordinator.getTask(a.caller, t.id)).id).toBe(t.id);
    await expect(f.coordinator.createTask(a.caller, { type: 't' })).rejects.toMatchObject({
      code: 'forbidden',
    });
    await expect(f.coordinator.cancelTask(a.caller, t.id, undefined)).rejects.toMatchObject({
      code: 'forbidden',
    });
    await expect(f.coordinator.retryTask(a.caller, t.id)).rejects.toMatchObject({ code: 'forbidden' });
    await expect(f.coordinator.sendCommand(a.caller, a.agentId, { type: 'wake' })).rejects.toMatchObject({
      code: 'forbidden',
    });
  });

  it('read-only reads everything and writes nothing; enrollment only registers', async () => {
    const a = await f.register();
    const t = await f.running(a);
    expect((await f.coordinator.getTask(READONLY, t.id)).id).toBe(t.id);
    expect((await f.coordinator.listAgents(READONLY)).agents.length).toBe(1);
    await expect(f.coordinator.createTask(READONLY, { type: 't' })).rejects.toMatchObject({
      code: 'forbidden',
    });
    await expect(f.coordinator.completeTask(READONLY, t.id, { version: t.version })).rejects.toMatchObject({
      code: 'forbidden',
    });
    await expect(f.coordinator.registerAgent(READONLY, { agentType: 'x' })).rejects.toMatchObject({
      code: 'forbidden',
    });
    await expect(f.coordinator.getTask(ENROLLMENT, t.id)).rejects.toMatchObject({ code: 'forbidden' });
    await expect(f.coordinator.claim(ENROLLMENT, a.agentId, { types: ['t'] })).rejects.toMatchObject({
      code: 'forbidden',
    });
    expect((await f.coordinator.registerAgent(ENROLLMENT, { agentType: 'x' })).token).toMatch(/^rsa_/);
  });

  it("admin writes act as the task's holder", async () => {
    const a = await f.register();
    const t = await f.running(a);
    const done = await f.coordinator.completeTask(ADMIN, t.id, { version: t.version, result: 'by admin' });
    expect(done).toMatchObject({ status: 'completed', result: 'by admin', agentId: a.agentId });
    const unheld = await f.create();
    await expect(f.coordinator.startTask(ADMIN, unheld.id, 0)).rejects.toMatchObject({
      code: 'invalid_transition',
    });
  });
});

describe('cancel', () => {
  it('the holder learns it on its next heartbeat: a cancel command and a cancelled outcome', async () => {
    const a = await f.register();
    const t = await f.running(a);
    const cancelled = await f.coordinator.cancelTask(ADMIN, t.id, 'not needed');
    expect(cancelled).toMatchObject({ status: 'cancelled', final: true });
    expect(f.coordinator.stats().trackedLeases).toBe(0);
    const beat = await f.coordinator.agentHeartbeat(a.caller, a.agentId, {
      tasks: [{ taskId: t.id, version: t.version }],
    });
    expect(beat.tasks).toEqual([{ taskId: t.id, ok: false, code: 'cancelled' }]);
    expect(beat.commands).toEqual([
      { type: 'cancel', taskId: t.id, reason: 'not needed', id: expect.stringMatching(/^cmd_/) },
    ]);
    // Delivered once.
    expect((await f.coordinator.agentHeartbeat(a.caller, a.agentId, {})).commands).toEqual([]);
    // A late completion is refused.
    await expect(f.coordinator.completeTask(a.caller, t.id, { version: t.version })).rejects.toMatchObject({
      code: 'invalid_transition',
    });
  });

  it('a cancelled created task sends no command; cancelling a final task is 409', async () => {
    const a = await f.register();
    const t = await f.create();
    await f.coordinator.cancelTask(ADMIN, t.id, undefined);
    expect((await f.coordinator.agentHeartbeat(a.caller, a.agentId, {})).commands).toEqual([]);
    await expect(f.coordinator.cancelTask(ADMIN, t.id, undefined)).rejects.toMatchObject({
      code: 'invalid_transition',
    });
  });

  it('operator commands are delivered on the next agent heartbeat', async () => {
    const a = await f.register();
    const wake = await f.coordinator.sendCommand(ADMIN, a.agentId, { type: 'wake', reason: 'stalled' });
    const restart = await f.coordinator.sendCommand(ADMIN, a.agentId, { type: 'restart' });
    expect((await f.coordinator.agentHeartbeat(a.caller, a.agentId, { status: 'running' })).commands).toEqual(
      [
        { type: 'wake', reason: 'stalled', id: wake.commandId },
        { type: 'restart', id: restart.commandId },
      ],
    );
    await expect(f.coordinator.sendCommand(ADMIN, 'agt_nope', { type: 'wake' })).rejects.toMatchObject({
      code: 'not_found',
    });
    expect(
      f.events
        .filter((e) => e.type === 'agent.status')
        .map((e) => e.type === 'agent.status' && e.agent.status),
    ).toEqual(['running']);
  });
});
