/**
 * Effect keys over HTTP: claim, record, release by the task's holder; the answers every later
 * attempt gets; the refusals (stale version, another agent, a bad key, a lapsed claim, a large result).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type TestAgent } from '../test-support/api-harness.js';

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

const claim = (id: string, key: string, token: string, body: object) =>
  h.request('POST', `/v1/tasks/${id}/effects/${key}/claim`, { token, body });
const record = (id: string, key: string, token: string, body: object) =>
  h.request('PUT', `/v1/tasks/${id}/effects/${key}`, { token, body });

describe('effect keys', () => {
  it('the holder claims, records, and any later claim of the key gets the recorded result', async () => {
    const task = await h.runningTask(agent);
    const first = await claim(task.id, 'send-email', agent.token, { version: task.version });
    expect(first.statusCode).toBe(200);
    const claimed = first.json();
    expect(claimed).toMatchObject({ outcome: 'claimed', claimId: expect.stringMatching(/^clm_/) });
    // The same attempt asking again is told the key is being run.
    expect((await claim(task.id, 'send-email', agent.token, { version: task.version })).json()).toMatchObject(
      {
        outcome: 'running',
        claimExpiresAt: claimed.claimExpiresAt,
      },
    );
    const recorded = await record(task.id, 'send-email', agent.token, {
      claimId: claimed.claimId,
      result: { messageId: 'm-1' },
    });
    expect(recorded.json()).toMatchObject({ outcome: 'recorded', result: { messageId: 'm-1' } });
    expect((await claim(task.id, 'send-email', agent.token, { version: task.version })).json()).toMatchObject(
      {
        outcome: 'done',
        result: { messageId: 'm-1' },
      },
    );
  });

  it('refuses a stale version (409), another agent (403), a bad key (400), an unknown task (404)', async () => {
    const task = await h.runningTask(agent);
    const stale = await claim(task.id, 'k', agent.token, { version: task.version + 1 });
    expect(stale.statusCode).toBe(409);
    expect(stale.json().error.code).toBe('stale_version');
    const foreign = await claim(task.id, 'k', other.token, { version: task.version });
    expect(foreign.statusCode).toBe(403);
    const bad = await claim(task.id, 'no%20spaces', agent.token, { version: task.version });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'validation_failed' });
    expect(bad.json().error.message).toContain('path.key');
    expect((await claim('tsk_nope', 'k', agent.token, { version: 1 })).statusCode).toBe(404);
    const noVersion = await claim(task.id, 'k', agent.token, {});
    expect(noVersion.statusCode).toBe(400);
    // None of these claimed the key.
    expect((await claim(task.id, 'k', agent.token, { version: task.version })).json().outcome).toBe(
      'claimed',
    );
  });

  it('release frees the key; a released or unknown claim cannot record (409 conflict)', async () => {
    const task = await h.runningTask(agent);
    const { claimId } = (await claim(task.id, 'k', agent.token, { version: task.version })).json();
    const released = await h.request('DELETE', `/v1/tasks/${task.id}/effects/k?claimId=${claimId}`, {
      token: agent.token,
    });
    expect(released.json()).toEqual({ released: true });
    const late = await record(task.id, 'k', agent.token, { claimId, result: 1 });
    expect(late.statusCode).toBe(409);
    expect(late.json().error.code).toBe('conflict');
    expect((await claim(task.id, 'k', agent.token, { version: task.version })).json().outcome).toBe(
      'claimed',
    );
    const noClaim = await h.request('DELETE', `/v1/tasks/${task.id}/effects/k`, { token: agent.token });
    expect(noClaim.statusCode).toBe(400);
  });

  it('refuses a result over 64 KiB (413) and keeps the claim', async () => {
    const task = await h.runningTask(agent);
    const { claimId } = (await claim(task.id, 'k', agent.token, { version: task.version })).json();
    const big = await record(task.id, 'k', agent.token, { claimId, result: 'x'.repeat(70 * 1024) });
    expect(big.statusCode).toBe(413);
    expect(big.json().error.code).toBe('payload_too_large');
    expect((await record(task.id, 'k', agent.token, { claimId, result: 'ok' })).json().outcome).toBe(
      'recorded',
    );
  });
});
