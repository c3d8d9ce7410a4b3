/**
 * The coordinator's side of `rouse supervise` (manual clock, real SQLite): one live supervisor per
 * name, commands for supervised agents routed to their supervisor, the supervisor's acknowledgements
 * (with output) ending interventions, plain children kept alive by the supervisor's report (and SDK
 * children not), and fatal reports published as `agent.fatal`.
 */
import { SUPERVISOR_AGENT_TYPE, type SupervisedChild } from '@rouse/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { RouseError } from '../core/errors.js';
import {
  ADMIN,
  type CoordinatorFixture,
  createFixture,
  createFixtureWithPolicies,
  ENROLLMENT,
  type FixtureAgent,
  settle,
} from '../test-support/coordinator-fixture.js';
import { storeCallCounter } from '../test-support/store-call-counter.js';
import { BACKGROUND_STORE_CALLS } from './limited.js';

let f: CoordinatorFixture;
afterEach(async () => {
  await f.close();
});

async function register(req: {
  agentType: string;
  key?: string;
  supervisorId?: string;
  exclusive?: boolean;
}): Promise<FixtureAgent & { incarnation: number }> {
  const r = await f.coordinator.registerAgent(ENROLLMENT, req);
  return {
    agentId: r.agent.id,
    token: r.token,
    incarnation: r.incarnation,
    caller: { kind: 'agent', agentId: r.agent.id, incarnation: r.incarnation, agentType: r.agent.agentType },
  };
}

const supervisor = (name = 'host-1') =>
  register({ agentType: SUPERVISOR_AGENT_TYPE, key: name, exclusive: true });

function entry(
  child: { agentId: string; incarnation: number },
  over: Partial<SupervisedChild> = {},
): SupervisedChild {
  return {
    agentKey: 'host-1/p-1',
    agentId: child.agentId,
    incarnation: child.incarnation,
    program: 'p',
    instance: 1,
    plain: true,
    pid: 4242,
    state: 'running',
    restarts: 0,
    rssBytes: 1_000_000,
    cpuPercent: 12.5,
    outputAt: f.clock.now(),
    ...over,
  };
}

describe('supervision in the coordinator', () => {
  it('refuses a second live supervisor of the same name, and takes the name once the first left', async () => {
    f = await createFixture();
    const first = await supervisor();
    const refused = await supervisor().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RouseError);
    expect(refused).toMatchObject({ code: 'agent_key_in_use', details: { agentId: first.agentId } });
    await f.coordinator.leave(first.caller, first.agentId);
    expect((await supervisor()).incarnation).toBe(2);
  });

  it('routes restart and terminate to the supervisor only, wake to both under one id, the rest to the agent', async () => {
    f = await createFixture();
    const sup = await supervisor();
    const child = await register({ agentType: 'p', key: 'host-1/p-1', supervisorId: sup.agentId });
    const beat = async (a: FixtureAgent) =>
      (await f.coordinator.agentHeartbeat(a.caller, a.agentId, {})).commands;

    const restart = await f.coordinator.sendCommand(ADMIN, child.agentId, { type: 'restart' });
    const wake = await f.coordinator.sendCommand(ADMIN, child.agentId, { type: 'wake', signal: 'SIGUSR1' });
    const checkpoint = await f.coordinator.sendCommand(ADMIN, child.agentId, { type: 'checkpoint' });
    expect(await beat(sup)).toEqual([
      { type: 'restart', id: restart.commandId, agentId: child.agentId, agentKey: 'host-1/p-1' },
      { type: 'wake', signal: 'SIGUSR1', id: wake.commandId, agentId: child.agentId, agentKey: 'host-1/p-1' },
    ]);
    expect(await beat(child)).toEqual([
      { type: 'wake', signal: 'SIGUSR1', id: wake.commandId },
      { type: 'checkpoint', id: checkpoint.commandId },
    ]);

    // A supervisor that left carries out nothing: the agent gets its command itself.
    await f.coordinator.leave(sup.caller, sup.agentId);
    const terminate = await f.coordinator.sendCommand(ADMIN, child.agentId, { type: 'terminate' });
    expect(await beat(child)).toEqual([{ type: 'terminate', id: terminate.commandId }]);
  });

  it("ends an intervention on the supervisor's acknowledgement, with the output it carries; another agent's ack is ignored", async () => {
    f = await createFixture();
    const sup = await supervisor();
    const stranger = await supervisor('host-2');
    const child = await register({ agentType: 'p', key: 'host-1/p-1', supervisorId: sup.agentId });
    const sent = await f.coordinator.sendCommand(ADMIN, child.agentId, { type: 'terminate' });
    const ack = { commandId: sent.commandId, outcome: 'done' as const, output: 'last words\n' };
    await f.coordinator.agentHeartbeat(stranger.caller, stranger.agentId, { acks: [ack] });
    expect((await f.coordinator.getIntervention(ADMIN, sent.intervention!.id)).state).toBe('pending');
    await f.coordinator.agentHeartbeat(sup.caller, sup.agentId, { acks: [ack] });
    const ended = await f.coordinator.getIntervention(ADMIN, sent.intervention!.id);
    expect(ended).toMatchObject({
      state: 'succeeded',
      evidence: { output: 'last words\n', ack: { outcome: 'done', by: 'supervisor', from: sup.agentId } },
    });
  });

  it("a supervised agent that leaves leaves its intervention to its supervisor's acknowledgement", async () => {
    f = await createFixture();
    const sup = await supervisor();
    const child = await register({ agentType: 'p', key: 'host-1/p-1', supervisorId: sup.agentId });
    const sent = await f.coordinator.sendCommand(ADMIN, child.agentId, { type: 'terminate' });
    // The child's SDK leaves on the supervisor's SIGTERM, before the supervisor saw it exit.
    await f.coordinator.leave(child.caller, child.agentId);
    expect((await f.coordinator.getIntervention(ADMIN, sent.intervention!.id)).state).toBe('pending');
    await f.coordinator.agentHeartbeat(sup.caller, sup.agentId, {
      acks: [{ commandId: sent.commandId, outcome: 'done', output: 'bye' }],
    });
    expect(await f.coordinator.getIntervention(ADMIN, sent.intervention!.id)).toMatchObject({
      state: 'succeeded',
      evidence: { output: 'bye' },
    });
  });

  it("keeps a plain child alive from its supervisor's report, never an SDK child or another supervisor's", async () => {
    f = await createFixture();
    const sup = await supervisor();
    const other = await supervisor('host-2');
    const plain = await register({ agentType: 'p', key: 'host-1/p-1', supervisorId: sup.agentId });
    const sdk = await register({ agentType: 'p', key: 'host-1/p-2', supervisorId: sup.agentId });
    const foreign = await register({ agentType: 'p', key: 'host-2/p-1', supervisorId: other.agentId });
    // Well past every first lease (the startup timeout), the supervisor reporting all three.
    for (let i = 0; i < 20; i++) {
      await f.advance(5000);
      await f.coordinator.agentHeartbeat(sup.caller, sup.agentId, {
        children: [
          entry(plain, { progress: 0.25, phase: 'step 1/4' }),
          entry(sdk, { agentKey: 'host-1/p-2', instance: 2, plain: false }),
          entry(foreign, { agentKey: 'host-2/p-1' }),
        ],
      });
    }
    const kept = await f.coordinator.getAgent(ADMIN, plain.agentId);
    expect(kept).toMatchObject({
      status: 'running',
      lastHeartbeatAt: f.clock.now(),
      progress: 0.25,
      phase: 'step 1/4',
      metrics: { rssBytes: 1_000_000, cpuPercent: 12.5 },
    });
    expect((await f.coordinator.getAgent(ADMIN, sdk.agentId)).status).toBe('lost');
    expect((await f.coordinator.getAgent(ADMIN, foreign.agentId)).status).toBe('lost');

    // Not running (backing off between restarts): its lease is not renewed either.
    for (let i = 0; i < 20; i++) {
      await f.advance(5000);
      await f.coordinator.agentHeartbeat(sup.caller, sup.agentId, {
        children: [entry(plain, { state: 'backoff', pid: null })],
      });
    }
    expect((await f.coordinator.getAgent(ADMIN, plain.agentId)).status).toBe('lost');
  });

  it("hands a plain child's own commands to its supervisor, and publishes each fatal report as agent.fatal", async () => {
    f = await createFixture();
    const sup = await supervisor();
    const plain = await register({ agentType: 'p', key: 'host-1/p-1', supervisorId: sup.agentId });
    const cancel = await f.coordinator.sendCommand(ADMIN, plain.agentId, { type: 'cancel' });
    const res = await f.coordinator.agentHeartbeat(sup.caller, sup.agentId, { children: [entry(plain)] });
    expect(res.commands).toEqual([
      { type: 'cancel', id: cancel.commandId, agentId: plain.agentId, agentKey: 'host-1/p-1' },
    ]);
    const report = {
      agentKey: 'host-1/p-1',
      program: 'p',
      instance: 1,
      restarts: 5,
      at: f.clock.now(),
      lastExit: { code: 3, signal: null },
      output: 'boom',
    };
    await f.coordinator.agentHeartbeat(sup.caller, sup.agentId, { fatal: [report] });
    expect(f.events.filter((e) => e.type === 'agent.fatal')).toEqual([
      { type: 'agent.fatal', at: f.clock.now(), supervisorId: sup.agentId, report },
    ]);
  });

  it('takes fatal reports only from a supervisor, and one naming an agent only for its own child', async () => {
    f = await createFixture();
    const sup = await supervisor();
    const other = await supervisor('host-2');
    const child = await register({ agentType: 'p', key: 'host-1/p-1', supervisorId: sup.agentId });
    const worker = await register({ agentType: 'w', key: 'w-1' });
    const report = (agentId: string | undefined, agentKey: string) => ({
      agentKey,
      ...(agentId === undefined ? {} : { agentId }),
      program: 'p',
      instance: 1,
      restarts: 5,
      at: f.clock.now(),
      lastExit: null,
    });
    // A worker (not a supervisor) names the child, and reports a made-up key; another supervisor
    // names a child that is not its own.
    await f.coordinator.agentHeartbeat(worker.caller, worker.agentId, {
      fatal: [report(child.agentId, 'host-1/p-1'), report(undefined, 'made-up')],
    });
    await f.coordinator.agentHeartbeat(other.caller, other.agentId, {
      fatal: [report(child.agentId, 'host-1/p-1')],
    });
    for (let i = 0; i < 5; i++) await settle();
    expect(f.events.filter((e) => e.type === 'agent.fatal')).toEqual([]);
    expect((await f.coordinator.listAlerts(ADMIN, {})).alerts).toEqual([]);
    // Its own supervisor's report counts: the event, and a critical alert under the child's type.
    await f.coordinator.agentHeartbeat(sup.caller, sup.agentId, {
      fatal: [report(child.agentId, 'host-1/p-1')],
    });
    for (let i = 0; i < 5 && f.events.every((e) => e.type !== 'agent.fatal'); i++) await settle();
    expect(f.events.filter((e) => e.type === 'agent.fatal')).toMatchObject([{ supervisorId: sup.agentId }]);
    let alerts = (await f.coordinator.listAlerts(ADMIN, {})).alerts;
    for (let i = 0; i < 20 && alerts.length === 0; i++) {
      await settle();
      alerts = (await f.coordinator.listAlerts(ADMIN, {})).alerts;
    }
    expect(alerts).toMatchObject([
      { group: { agentType: 'p', condition: 'fatal' }, agentIds: [child.agentId], severity: 'critical' },
    ]);
  });
});

describe("a supervisor's heartbeat for many children", () => {
  it('evaluates its children a few at a time: their condition writes share batched store calls', async () => {
    const conditionWrites = storeCallCounter(['applyConditionChanges']);
    f = await createFixtureWithPolicies(
      `
policies:
  - name: plain
    agent_type: p
    heartbeat: { expected_interval: 1s, timeout_factor: 30 }
    stall_detection: { enabled: true, stall_threshold: 2s }
`,
      {},
      conditionWrites.wrap,
    );
    const sup = await supervisor();
    const children: Awaited<ReturnType<typeof register>>[] = [];
    for (let n = 1; n <= 12; n++) {
      children.push(await register({ agentType: 'p', key: `host-1/p-${n}`, supervisorId: sup.agentId }));
    }
    const report = () =>
      children.map((c, n) =>
        entry(c, { agentKey: `host-1/p-${n + 1}`, instance: n + 1, outputAt: f.clock.now() }),
      );
    await f.coordinator.agentHeartbeat(sup.caller, sup.agentId, { children: report() });
    // All twelve fall silent together: each is stalled once its threshold passes.
    await f.advance(2500);
    for (const c of children) expect((await f.coordinator.getAgent(ADMIN, c.agentId)).status).toBe('stalled');
    // They all write again: one heartbeat closes twelve conditions.
    conditionWrites.reset();
    await f.coordinator.agentHeartbeat(sup.caller, sup.agentId, { children: report() });
    for (const c of children) expect((await f.coordinator.getAgent(ADMIN, c.agentId)).status).toBe('running');
    expect(conditionWrites.calls).toBeLessThanOrEqual(Math.ceil(children.length / BACKGROUND_STORE_CALLS));
  });
});

describe('supervisor heartbeat interval', () => {
  it("is asked to beat as often as its plain children's policies need (its beat is theirs)", async () => {
    f = await createFixtureWithPolicies(`
policies:
  - name: quick
    agent_type: quick
    heartbeat: { expected_interval: 1s, timeout_factor: 3 }
`);
    const sup = await supervisor();
    expect((await f.coordinator.agentHeartbeat(sup.caller, sup.agentId, {})).heartbeatIntervalMs).toBe(5000);
    const plain = await register({ agentType: 'quick', key: 'host-1/p-1', supervisorId: sup.agentId });
    const res = await f.coordinator.agentHeartbeat(sup.caller, sup.agentId, { children: [entry(plain)] });
    expect(res.heartbeatIntervalMs).toBe(1000);
  });
});
