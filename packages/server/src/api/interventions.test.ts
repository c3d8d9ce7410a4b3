/**
 * Manual interventions over HTTP: a person's wake / restart / terminate is recorded as an
 * intervention, delivered with a command id, and ended by the agent's acknowledgement; a newer
 * command supersedes an open one; `GET /v1/interventions` and `/v1/interventions/{id}` read them.
 */
import type { Intervention } from '@rouse/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type TestAgent, TOKENS } from '../test-support/api-harness.js';

let h: Harness;
let agent: TestAgent;
beforeEach(async () => {
  h = await createHarness();
  agent = await h.register();
});
afterEach(async () => {
  await h.close();
});

const heartbeat = (body: unknown) =>
  h.request('POST', `/v1/agents/${agent.agentId}/heartbeat`, { token: agent.token, body });
const command = (body: unknown) => h.request('POST', `/v1/agents/${agent.agentId}/commands`, { body });
const interventions = async (query = ''): Promise<Intervention[]> =>
  (await h.request('GET', `/v1/interventions${query}`)).json().interventions;

describe('manual interventions', () => {
  it('a wake is recorded, delivered with its id, and ended by the acknowledgement', async () => {
    await heartbeat({ status: 'running' });
    const sent = await command({ type: 'wake', reason: 'looks stuck to me' });
    expect(sent.statusCode).toBe(202);
    const { commandId, intervention } = sent.json();
    expect(commandId).toMatch(/^cmd_/);
    expect(intervention).toMatchObject({
      agentId: agent.agentId,
      condition: 'manual',
      action: 'wake',
      rung: null,
      state: 'pending',
      reason: 'looks stuck to me',
      actor: 'admin',
      commandId,
      evidence: { status: 'running' },
      endedAt: null,
    });
    const delivered = (await heartbeat({})).json().commands;
    expect(delivered).toEqual([{ type: 'wake', reason: 'looks stuck to me', id: commandId }]);
    expect((await heartbeat({ acks: [{ commandId, outcome: 'done', message: 'woke up' }] })).statusCode).toBe(
      200,
    );
    const [ended] = await interventions(`?agentId=${agent.agentId}`);
    expect(ended).toMatchObject({
      id: intervention.id,
      state: 'succeeded',
      reason: 'woke up',
      evidence: { status: 'running', ack: { outcome: 'done', message: 'woke up' } },
    });
    expect(ended?.endedAt).not.toBeNull();
    const one = await h.request('GET', `/v1/interventions/${intervention.id}`, { token: TOKENS.readonly });
    expect(one.json().intervention).toEqual(ended);
    // An acknowledgement said twice, or of a command nobody sent, changes nothing.
    await heartbeat({
      acks: [
        { commandId, outcome: 'failed' },
        { commandId: 'cmd_nope', outcome: 'done' },
      ],
    });
    expect((await interventions())[0]).toEqual(ended);
  });

  it('a newer command supersedes an open one; failed and unsupported end them too; cancel opens none', async () => {
    const restart = (await command({ type: 'restart' })).json();
    expect(restart.intervention).toMatchObject({ action: 'snapshot_and_restart', state: 'pending' });
    const terminate = (await command({ type: 'terminate', reason: 'enough' })).json();
    const [latest, superseded] = await interventions();
    expect(latest).toMatchObject({ id: terminate.intervention.id, action: 'terminate', state: 'pending' });
    expect(superseded).toMatchObject({ id: restart.intervention.id, state: 'skipped' });
    expect(superseded?.reason).toContain('superseded');
    await heartbeat({
      acks: [{ commandId: terminate.commandId, outcome: 'unsupported', message: 'not supervised' }],
    });
    expect((await interventions())[0]).toMatchObject({ state: 'skipped', reason: 'not supervised' });
    const wake = (await command({ type: 'wake' })).json();
    await heartbeat({ acks: [{ commandId: wake.commandId, outcome: 'failed' }] });
    expect((await interventions('?state=failed')).map((i) => i.id)).toEqual([wake.intervention.id]);
    const cancel = (await command({ type: 'cancel', taskId: 'tsk_1' })).json();
    expect(cancel).toMatchObject({ ok: true, intervention: null, commandId: expect.stringMatching(/^cmd_/) });
    expect(await interventions()).toHaveLength(3);
  });

  it('lists a page at a time, filters by state; refuses a bad query and answers an unknown id with 404', async () => {
    for (let i = 0; i < 3; i++) await command({ type: 'wake', reason: `w${i}` });
    const page = (await h.request('GET', '/v1/interventions?limit=2')).json();
    expect(page.interventions.map((i: Intervention) => i.reason)).toEqual([
      'w2',
      expect.stringContaining('superseded'),
    ]);
    const rest = (await h.request('GET', `/v1/interventions?limit=2&cursor=${page.nextCursor}`)).json();
    expect(rest.interventions).toHaveLength(1);
    expect(rest.nextCursor).toBeNull();
    expect(await interventions('?state=pending,held')).toHaveLength(1);
    const bad = await h.request('GET', '/v1/interventions?state=asleep');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('validation_failed');
    const missing = await h.request('GET', '/v1/interventions/itv_nope');
    expect(missing.statusCode).toBe(404);
    expect((await h.request('GET', '/v1/interventions', { token: null })).statusCode).toBe(401);
    // A bad acknowledgement is refused whole.
    const badAck = await heartbeat({ acks: [{ commandId: 'cmd_1', outcome: 'maybe' }] });
    expect(badAck.statusCode).toBe(400);
  });
});
