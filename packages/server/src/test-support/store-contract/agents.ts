/**
 * Contract: agent slots and incarnations, lookup, heartbeats (lease, status, progress and its clock,
 * samples), polls and ending (the commands queued for agents: agent-commands.ts).
 */

import type { AgentStatus, ConditionKind } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import { beat, newAgent, queueCommand, takeAsCurrent } from './agent-fixtures.js';
import { expectCode, type Harness, T0, writer } from './harness.js';

export function agentsContract(h: () => Harness): void {
  describe('agents', () => {
    it('registers an idle active agent with a first lease and reads it back by id and token hash', async () => {
      const { store } = h();
      const { agent, replacedIncarnation, closed } = await store.registerAgent(
        newAgent('agt_1', { requires: ['openai'], supervisorId: 'sup-1', policy: 'reviewers' }),
      );
      expect(replacedIncarnation).toBeNull();
      expect(closed).toEqual([]);
      expect(agent).toEqual({
        id: 'agt_1',
        key: null,
        incarnation: 1,
        agentType: 'codex-reviewer',
        name: 'host/agt_1',
        host: 'host-1',
        pid: 4242,
        taskTypes: ['work'],
        labels: { zone: 'a' },
        requires: ['openai'],
        supervisorId: 'sup-1',
        policy: 'reviewers',
        status: 'idle',
        reportedStatus: 'idle',
        statusMessage: null,
        conditions: [],
        registeredAt: T0,
        startedAt: T0,
        lastHeartbeatAt: null,
        leaseExpiresAt: T0 + 30_000,
        heartbeatIntervalMs: 5000,
        lastPollAt: null,
        lastPollTypes: [],
        metrics: null,
        metadata: null,
        progress: null,
        phase: null,
        progressChangedAt: null,
        endedAt: null,
        currentTaskIds: [],
      });
      expect(await store.getAgent('agt_1')).toEqual(agent);
      expect(await store.resolveAgentToken('hash-agt_1')).toEqual({
        agentId: 'agt_1',
        incarnation: 1,
        agentType: 'codex-reviewer',
      });
      expect(await store.getAgent('agt_nope')).toBeNull();
      expect(await store.resolveAgentToken('hash-nope')).toBeNull();
      const { agent: bare } = await store.registerAgent(
        newAgent('agt_2', { host: null, pid: null, taskTypes: [], labels: {} }),
      );
      expect(bare).toMatchObject({ host: null, pid: null, taskTypes: [], labels: {} });
    });

    it('refuses an exclusive registration while the key is live, and takes it once it is not', async () => {
      const { store, clock } = h();
      const key = 'host-3';
      await store.registerAgent(newAgent('agt_1', { key, exclusive: true }));
      const refused = await expectCode(
        store.registerAgent(newAgent('agt_2', { key, tokenHash: 'hash-2', exclusive: true })),
        'agent_key_in_use',
      );
      expect(refused.details).toMatchObject({ key, agentId: 'agt_1', incarnation: 1 });
      // Nothing changed: the first incarnation still holds the slot with its token.
      expect(await store.resolveAgentToken('hash-agt_1')).toMatchObject({ agentId: 'agt_1', incarnation: 1 });
      expect(await store.resolveAgentToken('hash-2')).toBeNull();
      // A lease that ran out frees the key (a supervisor that was killed).
      clock.advance(30_001);
      const second = await store.registerAgent(
        newAgent('agt_3', { key, tokenHash: 'hash-3', exclusive: true }),
      );
      expect(second.agent).toMatchObject({ id: 'agt_1', incarnation: 2 });
      // An agent that left frees it at once.
      await store.endAgent({ agentId: 'agt_1', lifecycle: 'left', reason: 'bye' });
      const third = await store.registerAgent(
        newAgent('agt_4', { key, tokenHash: 'hash-4', exclusive: true }),
      );
      expect(third.agent).toMatchObject({ id: 'agt_1', incarnation: 3 });
      // Without `exclusive` a live slot is replaced as always.
      const fourth = await store.registerAgent(newAgent('agt_5', { key, tokenHash: 'hash-5' }));
      expect(fourth.agent).toMatchObject({ id: 'agt_1', incarnation: 4 });
    });

    it('refuses a second agent with the same id or token hash', async () => {
      const { store } = h();
      await store.registerAgent(newAgent('agt_1'));
      await expectCode(store.registerAgent(newAgent('agt_1', { tokenHash: 'other' })), 'conflict');
      await expectCode(store.registerAgent(newAgent('agt_2', { tokenHash: 'hash-agt_1' })), 'conflict');
      expect((await store.listAgents()).agents).toHaveLength(1);
    });

    it('starts the next incarnation of a slot registered again under its key and type', async () => {
      const { store, clock } = h();
      const first = await store.registerAgent(newAgent('agt_1', { key: 'host-3/reviewer-1' }));
      expect(first.agent).toMatchObject({ id: 'agt_1', key: 'host-3/reviewer-1', incarnation: 1 });
      await store.recordAgentHeartbeats([
        beat('agt_1', { status: 'error', statusMessage: 'boom', progress: { value: 0.5, phase: 'x' } }),
      ]);
      await queueCommand(store, 'agt_1', { type: 'wake' });
      const [opened] = await store.applyConditionChanges([
        {
          kind: 'open',
          agentId: 'agt_1',
          incarnation: 1,
          condition: 'progress_stalled',
          taskId: null,
          since: T0,
          evidence: { progress: 0.5 },
          openedBy: 'coordinator:c1',
        },
      ]);
      clock.advance(1000);
      const second = await store.registerAgent(
        newAgent('agt_other_id', {
          key: 'host-3/reviewer-1',
          tokenHash: 'hash-2',
          pid: 77,
          startupTimeoutMs: 9000,
        }),
      );
      expect(second.replacedIncarnation).toBe(1);
      expect(second.closed).toEqual([
        { ...opened!, closedAt: T0 + 1000, closeReason: expect.any(String) as string },
      ]);
      expect(second.agent).toMatchObject({
        id: 'agt_1',
        incarnation: 2,
        pid: 77,
        status: 'idle',
        reportedStatus: 'idle',
        statusMessage: null,
        conditions: [],
        registeredAt: T0,
        startedAt: T0 + 1000,
        lastHeartbeatAt: null,
        leaseExpiresAt: T0 + 10_000,
        progress: null,
        progressChangedAt: null,
      });
      // The old token no longer resolves; the new one does; the old incarnation's heartbeats change nothing.
      expect(await store.resolveAgentToken('hash-agt_1')).toBeNull();
      expect(await store.resolveAgentToken('hash-2')).toEqual({
        agentId: 'agt_1',
        incarnation: 2,
        agentType: 'codex-reviewer',
      });
      expect(await store.recordAgentHeartbeats([beat('agt_1', { incarnation: 1 })])).toEqual([null]);
      // Commands for the replaced incarnation are not handed to the new one.
      expect(await takeAsCurrent(store, 'agt_1')).toEqual([]);
      // The same key under another agent type is another slot; no key is always a new slot.
      const other = await store.registerAgent(
        newAgent('agt_3', { key: 'host-3/reviewer-1', agentType: 'planner', tokenHash: 'hash-3' }),
      );
      expect(other.agent).toMatchObject({ id: 'agt_3', incarnation: 1 });
      expect((await store.listAgents()).agents.map((a) => a.id)).toEqual(['agt_1', 'agt_3']);
    });

    it('lets one of two racing registrations under one key win each incarnation', async () => {
      const { store } = h();
      await store.registerAgent(newAgent('agt_1', { key: 'k' }));
      const racing = await Promise.all(
        [2, 3, 4].map((n) =>
          store.registerAgent(newAgent(`agt_x${n}`, { key: 'k', tokenHash: `hash-${n}` })),
        ),
      );
      expect(racing.map((r) => r.agent.incarnation).sort()).toEqual([2, 3, 4]);
      expect(racing.map((r) => r.replacedIncarnation).sort()).toEqual([1, 2, 3]);
      expect((await store.getAgent('agt_1'))?.incarnation).toBe(4);
    });

    it('pages agents in registration order, and filters by derived status in the store', async () => {
      const { store, clock } = h();
      const ids = Array.from({ length: 7 }, (_, i) => `agt_p${i}`);
      for (const id of ids) await store.registerAgent(newAgent(id));
      // 1 running, 2 error, 3 lost, 4 stalled (a task), 5 at_risk, 6 left; 0 stays idle.
      await store.recordAgentHeartbeats([
        beat('agt_p1', { status: 'running' }),
        beat('agt_p2', { status: 'error' }),
        beat('agt_p3', { leaseMs: 1000 }),
        beat('agt_p4', { status: 'running' }),
        beat('agt_p5', { status: 'running' }),
      ]);
      const open = (agentId: string, condition: ConditionKind, taskId: string | null = null) => ({
        kind: 'open' as const,
        agentId,
        incarnation: 1,
        condition,
        taskId,
        since: T0,
        evidence: {},
        openedBy: 'c',
      });
      await store.applyConditionChanges([
        open('agt_p4', 'progress_stalled', 'tsk_x'),
        open('agt_p5', 'resource_runaway'),
        open('agt_p2', 'error_persisting'),
      ]);
      clock.advance(1000);
      await store.markAgentsLost([{ agentId: 'agt_p3', incarnation: 1, evidence: {}, openedBy: 'c' }]);
      await store.endAgent({ agentId: 'agt_p6', lifecycle: 'left', reason: 'x' });
      const statusOf = async (status: AgentStatus) =>
        (await store.listAgents({ statuses: [status] })).agents.map((a) => a.id);
      expect(await statusOf('idle')).toEqual(['agt_p0']);
      expect(await statusOf('running')).toEqual(['agt_p1']);
      expect(await statusOf('error')).toEqual(['agt_p2']);
      expect(await statusOf('lost')).toEqual(['agt_p3']);
      expect(await statusOf('stalled')).toEqual(['agt_p4']);
      expect(await statusOf('at_risk')).toEqual(['agt_p5']);
      expect(await statusOf('left')).toEqual(['agt_p6']);
      // The store's status is the derived one every agent shows.
      for (const a of (await store.listAgents()).agents) {
        expect((await store.listAgents({ statuses: [a.status] })).agents.map((x) => x.id)).toContain(a.id);
      }
      const several = await store.listAgents({ statuses: ['lost', 'stalled', 'left'], limit: 2 });
      expect(several.agents.map((a) => a.id)).toEqual(['agt_p3', 'agt_p4']);
      expect(several.nextCursor).not.toBeNull();
      const rest = await store.listAgents({
        statuses: ['lost', 'stalled', 'left'],
        limit: 2,
        cursor: several.nextCursor,
      });
      expect(rest).toEqual({
        agents: [expect.objectContaining({ id: 'agt_p6', conditions: [] })],
        nextCursor: null,
      });
      expect(several.agents[1]?.conditions.map((c) => c.taskId)).toEqual(['tsk_x']);
      // Pages of every agent: all of them, in order, once.
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await store.listAgents({ limit: 3, cursor });
        seen.push(...page.agents.map((a) => a.id));
        cursor = page.nextCursor;
      } while (cursor !== null);
      expect(seen).toEqual(ids);
      await expectCode(store.listAgents({ cursor: 'not-a-cursor' }), 'validation_failed');
    });

    it('lists agents in registration order, filtered by task type and agent type', async () => {
      const { store } = h();
      await store.registerAgent(newAgent('agt_1', { taskTypes: ['a', 'b'] }));
      await store.registerAgent(newAgent('agt_2', { taskTypes: ['b'], agentType: 'planner' }));
      await store.registerAgent(newAgent('agt_3', { taskTypes: ['c'] }));
      expect((await store.listAgents()).agents.map((a) => a.id)).toEqual(['agt_1', 'agt_2', 'agt_3']);
      expect((await store.listAgents({ taskType: 'b' })).agents.map((a) => a.id)).toEqual(['agt_1', 'agt_2']);
      expect((await store.listAgents({ agentType: 'planner' })).agents.map((a) => a.id)).toEqual(['agt_2']);
      expect(
        (await store.listAgents({ taskType: 'b', agentType: 'codex-reviewer' })).agents.map((a) => a.id),
      ).toEqual(['agt_1']);
      expect((await store.listAgents({ taskType: 'zzz' })).agents).toEqual([]);
      // An agent that polled for a type serves it too.
      await store.recordPoll({ agentId: 'agt_3', types: ['b'] });
      expect((await store.listAgents({ taskType: 'b' })).agents.map((a) => a.id)).toEqual([
        'agt_1',
        'agt_2',
        'agt_3',
      ]);
    });

    it('computes current tasks from the tasks it holds (the agent, its watch state)', async () => {
      const { store } = h();
      await store.registerAgent(newAgent('agt_a'));
      await store.registerAgent(newAgent('agt_b'));
      const claimed = await h().held(false, {}, 'agt_a');
      const running = await h().running({}, 'agt_a');
      const done = await h().running({}, 'agt_a');
      await store.completeTasks([writer(done)]);
      const agent = await store.getAgent('agt_a');
      expect(agent!.currentTaskIds).toEqual([claimed.id, running.id]);
      const { agents: listed } = await store.listAgents();
      expect(listed.map((a) => a.currentTaskIds)).toEqual([[claimed.id, running.id], []]);
      const [watch] = await store.getAgentWatches(['agt_a']);
      expect(watch?.heldTaskIds).toEqual([claimed.id, running.id]);
      const [beaten] = await store.recordAgentHeartbeats([beat('agt_a')]);
      expect(beaten?.watch.heldTaskIds).toEqual([claimed.id, running.id]);
    });

    it('records heartbeats: lease, reported status and since when, metrics, metadata, progress and its clock', async () => {
      const { store, clock } = h();
      await store.registerAgent(newAgent('agt_1'));
      clock.advance(100);
      const [r1] = await store.recordAgentHeartbeats([
        beat('agt_1', {
          status: 'running',
          metrics: { rssBytes: 1000, cpuPercent: 5 },
          metadata: { step: 1 },
          progress: { value: 0.1, phase: 'reading' },
        }),
      ]);
      expect(r1?.watch).toMatchObject({
        agentId: 'agt_1',
        incarnation: 1,
        lastHeartbeatAt: T0 + 100,
        leaseExpiresAt: T0 + 15_100,
        reportedStatus: 'running',
        reportedStatusSince: T0 + 100,
        progress: 0.1,
        phase: 'reading',
        progressChangedAt: T0 + 100,
        openConditions: [],
      });
      clock.advance(100);
      // No progress reported: the clock stays; the same progress again: the clock stays too.
      await store.recordAgentHeartbeats([beat('agt_1')]);
      clock.advance(100);
      const [r3] = await store.recordAgentHeartbeats([
        beat('agt_1', { status: 'running', progress: { value: 0.1, phase: 'reading' }, leaseMs: 1000 }),
      ]);
      expect(r3?.watch).toMatchObject({
        reportedStatusSince: T0 + 100,
        progressChangedAt: T0 + 100,
        leaseExpiresAt: T0 + 1300,
      });
      clock.advance(100);
      const [r4] = await store.recordAgentHeartbeats([
        beat('agt_1', {
          status: 'error',
          statusMessage: 'rate limited',
          progress: { value: { step: 2 }, phase: null },
        }),
      ]);
      expect(r4?.watch).toMatchObject({
        reportedStatus: 'error',
        reportedStatusSince: T0 + 400,
        statusMessage: 'rate limited',
        progress: { step: 2 },
        phase: null,
        progressChangedAt: T0 + 400,
      });
      await store.recordPoll({ agentId: 'agt_1', types: ['work', 'other'] });
      expect(await store.getAgent('agt_1')).toMatchObject({
        status: 'error',
        reportedStatus: 'error',
        statusMessage: 'rate limited',
        lastHeartbeatAt: T0 + 400,
        metrics: { rssBytes: 1000, cpuPercent: 5 },
        metadata: { step: 1 },
        progress: { step: 2 },
        lastPollAt: T0 + 400,
        lastPollTypes: ['work', 'other'],
      });
      // A status without a message clears the message.
      await store.recordAgentHeartbeats([beat('agt_1', { status: 'running' })]);
      expect((await store.getAgent('agt_1'))?.statusMessage).toBeNull();
      expect(await store.recordAgentHeartbeats([beat('agt_nope')])).toEqual([null]);
      await expectCode(store.recordPoll({ agentId: 'agt_nope', types: [] }), 'not_found');
    });

    it('keeps the lease from the start of the quiet period at least', async () => {
      const { store, clock } = h();
      await store.registerAgent(newAgent('agt_1'));
      clock.advance(1000);
      const [r] = await store.recordAgentHeartbeats([
        beat('agt_1', { leaseMs: 3000, quietPeriodMs: 60_000 }),
      ]);
      expect(r?.watch.leaseExpiresAt).toBe(T0 + 60_000);
      clock.advance(70_000);
      const [later] = await store.recordAgentHeartbeats([
        beat('agt_1', { leaseMs: 3000, quietPeriodMs: 60_000 }),
      ]);
      expect(later?.watch.leaseExpiresAt).toBe(T0 + 74_000);
    });

    it('keeps a bounded ring of samples spaced apart, and the gaps between heartbeats when asked', async () => {
      const { store, clock } = h();
      await store.registerAgent(newAgent('agt_1'));
      const sampled = (rssBytes: number) =>
        beat('agt_1', {
          sample: { rssBytes, cpuPercent: 10, iterationMs: null },
          sampleSpacingMs: 1000,
          maxSamples: 3,
          maxGaps: 2,
        });
      let watch = null;
      for (const [step, rss] of [
        [0, 1],
        [500, 2],
        [600, 3],
        [1000, 4],
        [1000, 5],
        [1000, 6],
      ] as const) {
        clock.advance(step);
        watch = (await store.recordAgentHeartbeats([sampled(rss)]))[0]?.watch;
      }
      // [at, rssBytes, cpuPercent, iterationMs]
      expect(watch?.samples.toArray()).toEqual([
        [T0 + 2100, 4, 10, null],
        [T0 + 3100, 5, 10, null],
        [T0 + 4100, 6, 10, null],
      ]);
      expect(watch?.gaps).toEqual([1000, 1000]);
      // Without gaps asked for, none are kept.
      const [plain] = await store.recordAgentHeartbeats([beat('agt_1')]);
      expect(plain?.watch.gaps).toEqual([]);
      expect((await store.getAgentWatches(['agt_1', 'agt_nope'])).map((w) => w.samples.length)).toEqual([3]);
    });

    it('ends an agent: no lease, no token, open conditions closed; ending again changes nothing', async () => {
      const { store } = h();
      await store.registerAgent(newAgent('agt_1'));
      await store.applyConditionChanges([
        {
          kind: 'open',
          agentId: 'agt_1',
          incarnation: 1,
          condition: 'dependency_down',
          taskId: null,
          since: T0,
          evidence: {},
          openedBy: 'coordinator:c1',
        },
      ]);
      const closed = await store.endAgent({ agentId: 'agt_1', lifecycle: 'left', reason: 'agent left' });
      expect(closed.map((c) => [c.condition, c.closeReason])).toEqual([['dependency_down', 'agent left']]);
      expect(await store.resolveAgentToken('hash-agt_1')).toBeNull();
      expect(await store.getAgent('agt_1')).toMatchObject({
        status: 'left',
        leaseExpiresAt: null,
        endedAt: T0,
        conditions: [],
      });
      expect(await store.recordAgentHeartbeats([beat('agt_1')])).toEqual([null]);
      expect(await store.endAgent({ agentId: 'agt_1', lifecycle: 'terminated', reason: 'x' })).toEqual([]);
      expect((await store.getAgent('agt_1'))?.status).toBe('left');
      await expectCode(store.endAgent({ agentId: 'agt_nope', lifecycle: 'left', reason: 'x' }), 'not_found');
    });
  });
}
