/**
 * Task blobs over HTTP: the holder stores bytes for its task and gets a reference; the holder, admin
 * and read-only tokens read them back (byte for byte, with their content type); another agent, a stale
 * version, an unknown blob are refused; after a retry the new holder reads what the first attempt
 * stored and the old one cannot; the blob sweep keeps task blobs.
 */
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshSchema } from '../../../../test/harness/postgres.js';
import { ManualClock } from '../core/clock.js';
import { createCoordinator } from '../services/create-coordinator.js';
import { createPostgresStore } from '../store/postgres/postgres-store.js';
import { createHarness, type Harness, type TestAgent, TOKENS } from '../test-support/api-harness.js';
import { createFixture } from '../test-support/coordinator-fixture.js';

let h: Harness;
let agent: TestAgent;
let other: TestAgent;
beforeEach(async () => {
  h = await createHarness();
  agent = await h.register();
  other = await h.register();
});
afterEach(async () => {
  await h.close();
});

const put = (
  id: string,
  version: number,
  token: string,
  payload: Buffer,
  type = 'application/x-rouse-session',
) =>
  h.request('PUT', `/v1/tasks/${id}/blobs?version=${version}`, {
    token,
    payload,
    headers: { 'content-type': type },
  });

describe('task blobs', () => {
  it('the holder stores bytes; the holder, admin and read-only read them back', async () => {
    const task = await h.runningTask(agent);
    const bytes = Buffer.from([0, 1, 2, 255, 10, 13]);
    const res = await put(task.id, task.version, agent.token, bytes);
    expect(res.statusCode).toBe(200);
    const { blobRef } = res.json();
    expect(blobRef).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      bytes: 6,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      contentType: 'application/x-rouse-session',
    });
    for (const token of [agent.token, TOKENS.admin, TOKENS.readonly]) {
      const got = await h.request('GET', `/v1/tasks/${task.id}/blobs/${blobRef.id}`, { token });
      expect(got.statusCode).toBe(200);
      expect(got.headers['content-type']).toBe('application/x-rouse-session');
      expect(got.headers['x-rouse-blob-sha256']).toBe(blobRef.sha256);
      expect(got.headers['x-content-type-options']).toBe('nosniff');
      expect(got.headers['content-security-policy']).toBe('sandbox');
      expect(got.rawPayload.equals(bytes)).toBe(true);
    }
  });

  it('refuses another agent (403), a stale version (409), a missing version (400), an unknown blob or task (404)', async () => {
    const task = await h.runningTask(agent);
    const { blobRef } = (await put(task.id, task.version, agent.token, Buffer.from('x'))).json();
    expect((await put(task.id, task.version, other.token, Buffer.from('y'))).statusCode).toBe(403);
    const stale = await put(task.id, task.version + 1, agent.token, Buffer.from('y'));
    expect(stale.statusCode).toBe(409);
    expect(stale.json().error.code).toBe('stale_version');
    const noVersion = await h.request('PUT', `/v1/tasks/${task.id}/blobs`, {
      token: agent.token,
      payload: 'x',
      headers: { 'content-type': 'text/plain' },
    });
    expect(noVersion.statusCode).toBe(400);
    expect(
      (await h.request('GET', `/v1/tasks/${task.id}/blobs/${blobRef.id}`, { token: other.token })).statusCode,
    ).toBe(403);
    const unknown = await h.request('GET', `/v1/tasks/${task.id}/blobs/ffff`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.message).toBe(`task ${task.id} has no blob ffff`);
    expect((await h.request('GET', '/v1/tasks/tsk_nope/blobs/ffff')).statusCode).toBe(404);
    expect(
      (
        await h.request('PUT', `/v1/tasks/${task.id}/blobs?version=${task.version}`, {
          token: TOKENS.readonly,
          payload: 'x',
          headers: { 'content-type': 'text/plain' },
        })
      ).statusCode,
    ).toBe(403);
  });

  it('after a retry the new holder reads what the first attempt stored; the old holder cannot', async () => {
    const task = await h.runningTask(agent, { maxAttempts: 1 });
    const { blobRef } = (await put(task.id, task.version, agent.token, Buffer.from('transcript'))).json();
    const failed = await h.request('POST', `/v1/tasks/${task.id}/fail`, {
      token: agent.token,
      body: { version: task.version, error: { code: 'x', message: 'x', retryable: true } },
    });
    expect(failed.statusCode).toBe(200);
    expect((await h.request('POST', `/v1/tasks/${task.id}/retry`)).statusCode).toBe(200);
    const next = await h.register();
    expect((await h.claim(next)).id).toBe(task.id);
    const got = await h.request('GET', `/v1/tasks/${task.id}/blobs/${blobRef.id}`, { token: next.token });
    expect(got.rawPayload.toString()).toBe('transcript');
    expect(
      (await h.request('GET', `/v1/tasks/${task.id}/blobs/${blobRef.id}`, { token: agent.token })).statusCode,
    ).toBe(403);
  });
});

describe('task blobs and the blob sweep', () => {
  it('a task blob is kept however old it is', async () => {
    const f = await createFixture();
    try {
      const a = await f.register(['t']);
      const task = await f.create({ type: 't' });
      const [claimed] = (await f.coordinator.claim(a.caller, a.agentId, { types: ['t'], max: 1, waitMs: 0 }))
        .tasks;
      const ref = await f.coordinator.uploadTaskBlob(
        a.caller,
        task.id,
        claimed!.version,
        'text/plain',
        Buffer.from('keep me'),
      );
      // the file store ages blobs by their mtime (real time) against the coordinator's clock
      await f.advance(Date.now() - f.clock.now() + 30 * 86_400_000);
      // the result of another task, uploaded and then replaced by nothing, is swept: the sweep runs
      const b = await f.running(a, { type: 'other' });
      await f.coordinator.uploadResult(a.caller, b.id, b.version, 'text/plain', Buffer.from('orphan'));
      await f.store.setResultRef({
        taskId: b.id,
        agentId: a.agentId,
        version: b.version,
        resultRef: { key: 'elsewhere/1', sizeBytes: 1, contentType: 'text/plain', sha256: 'x' },
      });
      await f.advance(30 * 86_400_000);
      await f.coordinator.sweepBlobsNow(); // (the periodic sweep may have run already while time passed)
      expect(await readdir(join(f.blobDir, b.id)).catch(() => [])).toEqual([]);
      const { stream } = await f.coordinator.getTaskBlob({ kind: 'admin' }, task.id, ref.id);
      const chunks: Buffer[] = [];
      for await (const c of stream) chunks.push(Buffer.from(c as Buffer));
      expect(Buffer.concat(chunks).toString()).toBe('keep me');
    } finally {
      await f.close();
    }
  });

  it('and in PostgreSQL, where the blobs live in the database', async () => {
    const db = await freshSchema('taskblobs');
    const clock = new ManualClock(1_700_000_000_000);
    const store = await createPostgresStore({
      connectionString: db.connectionString,
      schema: db.schema,
      clock,
    });
    const coordinator = createCoordinator({
      store,
      clock,
      logger: pino({ level: 'silent' }),
      blobDir: '/nonexistent',
      tokens: TOKENS,
    });
    try {
      const reg = await coordinator.registerAgent(
        { kind: 'enrollment' },
        { agentType: 'x', taskTypes: ['t', 'other'] },
      );
      const caller = {
        kind: 'agent' as const,
        agentId: reg.agent.id,
        incarnation: reg.agent.incarnation,
        agentType: 'x',
      };
      const hold = async (type: string) => {
        await coordinator.createTask({ kind: 'admin' }, { type });
        const [t] = (await coordinator.claim(caller, reg.agent.id, { types: [type], max: 1, waitMs: 0 }))
          .tasks;
        return t!;
      };
      const task = await hold('t');
      const ref = await coordinator.uploadTaskBlob(
        caller,
        task.id,
        task.version,
        'text/plain',
        Buffer.from('keep me'),
      );
      const b = await hold('other');
      const orphan = await coordinator.uploadResult(
        caller,
        b.id,
        b.version,
        'text/plain',
        Buffer.from('orphan'),
      );
      await store.setResultRef({
        taskId: b.id,
        agentId: reg.agent.id,
        version: b.version,
        resultRef: { ...orphan, key: 'elsewhere/1' },
      });
      clock.advance(30 * 86_400_000);
      expect(await coordinator.sweepBlobsNow()).toEqual({ blobs: 1, unfinishedUploads: 0 });
      const { stream } = await coordinator.getTaskBlob({ kind: 'admin' }, task.id, ref.id);
      const chunks: Buffer[] = [];
      for await (const c of stream) chunks.push(Buffer.from(c as Buffer));
      expect(Buffer.concat(chunks).toString()).toBe('keep me');
    } finally {
      await coordinator.stop();
      await store.close();
      await db.drop();
    }
  });
});
