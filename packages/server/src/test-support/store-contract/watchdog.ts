/**
 * Contract: what the watchdog keeps in the store — conditions opened and closed conditionally (one
 * open per agent, kind and task, whoever races), the derived status they give, agent leases and
 * marking agents lost, per-type baselines, status counts, and dependency states.
 */
import type { ConditionKind } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import { shardOf } from '../../store/lease-shards.js';
import type { ConditionChange, Store } from '../../store/store.js';
import { beat, newAgent } from './agent-fixtures.js';
import { type Harness, T0, uniqueId } from './harness.js';

function open(
  agentId: string,
  condition: ConditionKind,
  overrides: Partial<Extract<ConditionChange, { kind: 'open' }>> = {},
): ConditionChange {
  return {
    kind: 'open',
    agentId,
    incarnation: 1,
    condition,
    taskId: null,
    since: T0,
    evidence: { seen: condition },
    openedBy: 'coordinator:c1',
    ...overrides,
  };
}

function close(agentId: string, condition: ConditionKind, taskId: string | null = null): ConditionChange {
  return { kind: 'close', agentId, condition, taskId, reason: 'cleared' };
}

async function registered(store: Store, ...ids: string[]): Promise<void> {
  for (const id of ids) await store.registerAgent(newAgent(id, { tokenHash: `hash-${id}` }));
}

export function watchdogContract(h: () => Harness): void {
  describe('watchdog: conditions', () => {
    it('opens a condition once, closes it, and keeps the closed one as history', async () => {
      const { store, clock } = h();
      await registered(store, 'agt_1');
      clock.advance(10);
      const [opened, again] = await store.applyConditionChanges([
        open('agt_1', 'progress_stalled', { since: T0 + 5, evidence: { progress: 0.4 } }),
        open('agt_1', 'progress_stalled'),
      ]);
      expect(opened).toEqual({
        seq: expect.any(Number) as number,
        agentId: 'agt_1',
        incarnation: 1,
        agentType: 'codex-reviewer',
        condition: 'progress_stalled',
        taskId: null,
        since: T0 + 5,
        evidence: { progress: 0.4 },
        openedBy: 'coordinator:c1',
        openedAt: T0 + 10,
        closedAt: null,
        closeReason: null,
      });
      expect(again).toBeNull();
      expect(await store.getAgent('agt_1')).toMatchObject({
        status: 'stalled',
        conditions: [
          { condition: 'progress_stalled', since: T0 + 5, taskId: null, evidence: { progress: 0.4 } },
        ],
      });
      clock.advance(10);
      const [closed, closedAgain] = await store.applyConditionChanges([
        close('agt_1', 'progress_stalled'),
        close('agt_1', 'progress_stalled'),
      ]);
      expect(closed).toEqual({ ...opened, closedAt: T0 + 20, closeReason: 'cleared' });
      expect(closedAgain).toBeNull();
      expect(await store.getAgent('agt_1')).toMatchObject({ status: 'idle', conditions: [] });
      // Open again after it closed: a new record.
      const [reopened] = await store.applyConditionChanges([open('agt_1', 'progress_stalled')]);
      expect(reopened!.seq).toBeGreaterThan(opened!.seq);
      expect((await store.listConditions({ agentId: 'agt_1' })).map((c) => [c.seq, c.closedAt])).toEqual([
        [reopened!.seq, null],
        [opened!.seq, T0 + 20],
      ]);
      expect((await store.listConditions({ agentId: 'agt_1', open: false })).map((c) => c.seq)).toEqual([
        opened!.seq,
      ]);
      expect((await store.listConditions({ open: true })).map((c) => c.seq)).toEqual([reopened!.seq]);
      expect((await store.readConditions([reopened!.seq, 999_999, opened!.seq])).map((c) => c.seq)).toEqual([
        reopened!.seq,
        opened!.seq,
      ]);
    });

    it('keeps one open condition per task, and derives the status by precedence', async () => {
      const { store } = h();
      await registered(store, 'agt_1');
      await store.applyConditionChanges([
        open('agt_1', 'progress_stalled', { taskId: 'tsk_a' }),
        open('agt_1', 'progress_stalled', { taskId: 'tsk_b' }),
        open('agt_1', 'dependency_down'),
      ]);
      let agent = await store.getAgent('agt_1');
      expect(agent?.status).toBe('stalled');
      expect(agent?.conditions.map((c) => [c.condition, c.taskId])).toEqual([
        ['progress_stalled', 'tsk_a'],
        ['progress_stalled', 'tsk_b'],
        ['dependency_down', null],
      ]);
      await store.applyConditionChanges([close('agt_1', 'progress_stalled', 'tsk_a')]);
      expect((await store.getAgent('agt_1'))?.status).toBe('stalled');
      await store.applyConditionChanges([close('agt_1', 'progress_stalled', 'tsk_b')]);
      expect((await store.getAgent('agt_1'))?.status).toBe('at_risk');
      await store.recordAgentHeartbeats([beat('agt_1', { status: 'error' })]);
      expect((await store.getAgent('agt_1'))?.status).toBe('error');
      await store.recordAgentHeartbeats([beat('agt_1', { status: 'terminating' })]);
      expect((await store.getAgent('agt_1'))?.status).toBe('terminating');
      agent = (await store.listAgents()).agents.find((a) => a.id === 'agt_1') ?? null;
      expect(agent?.conditions.map((c) => c.condition)).toEqual(['dependency_down']);
      const [w] = await store.getAgentWatches(['agt_1']);
      expect(w?.openConditions).toEqual([{ condition: 'dependency_down', taskId: null }]);
    });

    it('opens nothing for an unknown agent, a replaced incarnation or an agent that ended', async () => {
      const { store } = h();
      await store.registerAgent(newAgent('agt_1', { key: 'k1' }));
      await store.registerAgent(newAgent('agt_1b', { key: 'k1', tokenHash: 'hash-2' })); // incarnation 2
      await registered(store, 'agt_2');
      await store.endAgent({ agentId: 'agt_2', lifecycle: 'left', reason: 'left' });
      expect(
        await store.applyConditionChanges([
          open('agt_nope', 'dependency_down'),
          open('agt_1', 'dependency_down', { incarnation: 1 }),
          open('agt_2', 'dependency_down'),
          close('agt_nope', 'dependency_down'),
        ]),
      ).toEqual([null, null, null, null]);
      const [ok] = await store.applyConditionChanges([open('agt_1', 'dependency_down', { incarnation: 2 })]);
      expect(ok?.incarnation).toBe(2);
    });

    it('records one condition when several writers open it at once', async () => {
      const { store } = h();
      await registered(store, 'agt_1');
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          store.applyConditionChanges([open('agt_1', 'resource_runaway', { openedBy: `coordinator:c${i}` })]),
        ),
      );
      expect(results.flat().filter((r) => r !== null)).toHaveLength(1);
      expect(await store.listConditions({ agentId: 'agt_1' })).toHaveLength(1);
    });
  });

  describe('watchdog: agent leases', () => {
    it('lists active agents whose lease ends by a time, in the given shards, soonest first', async () => {
      const { store, clock } = h();
      const ids = [uniqueId('agt'), uniqueId('agt'), uniqueId('agt')];
      await registered(store, ...ids);
      clock.advance(1000);
      await store.recordAgentHeartbeats([beat(ids[0]!, { leaseMs: 5000 }), beat(ids[1]!, { leaseMs: 2000 })]);
      // ids[2] keeps its startup lease (T0 + 30 s).
      const due = await store.dueAgentLeases({ dueBy: T0 + 6000 });
      expect(due.map((d) => [d.agentId, d.leaseExpiresAt])).toEqual([
        [ids[1], T0 + 3000],
        [ids[0], T0 + 6000],
      ]);
      expect(due[0]).toMatchObject({
        incarnation: 1,
        lastHeartbeatAt: T0 + 1000,
        startedAt: T0,
        heartbeatIntervalMs: 5000,
        heartbeatTimeoutMs: 2000,
      });
      const shard = shardOf(ids[1]!);
      const inShard = await store.dueAgentLeases({ dueBy: T0 + 60_000, shards: { ids: [shard], count: 64 } });
      expect(inShard.map((d) => d.agentId)).toContain(ids[1]);
      expect(inShard.every((d) => shardOf(d.agentId) === shard)).toBe(true);
      await store.endAgent({ agentId: ids[2]!, lifecycle: 'left', reason: 'left' });
      expect((await store.dueAgentLeases({ dueBy: T0 + 60_000 })).map((d) => d.agentId)).not.toContain(
        ids[2],
      );
    });

    it('marks an agent lost only once its lease passed, and a heartbeat brings its lease back', async () => {
      const { store, clock } = h();
      await registered(store, 'agt_1');
      await store.recordAgentHeartbeats([beat('agt_1', { leaseMs: 3000 })]);
      const lost = {
        agentId: 'agt_1',
        incarnation: 1,
        evidence: { gapMs: 3000 },
        openedBy: 'coordinator:c1',
      };
      clock.advance(2999);
      expect(await store.markAgentsLost([lost])).toEqual([null]);
      clock.advance(1);
      const [opened] = await store.markAgentsLost([lost]);
      expect(opened).toMatchObject({
        condition: 'heartbeat_timeout',
        since: T0 + 3000,
        evidence: { gapMs: 3000 },
      });
      expect(await store.getAgent('agt_1')).toMatchObject({ status: 'lost', leaseExpiresAt: null });
      expect(await store.markAgentsLost([lost])).toEqual([null]);
      expect(await store.dueAgentLeases({ dueBy: T0 + 1e9 })).toEqual([]);
      // It heartbeats again: a lease again; the condition is the caller's to close.
      clock.advance(500);
      const [r] = await store.recordAgentHeartbeats([beat('agt_1', { leaseMs: 3000 })]);
      expect(r?.watch).toMatchObject({
        leaseExpiresAt: T0 + 6500,
        openConditions: [{ condition: 'heartbeat_timeout', taskId: null }],
      });
      await store.applyConditionChanges([close('agt_1', 'heartbeat_timeout')]);
      expect((await store.getAgent('agt_1'))?.status).toBe('idle');
    });

    it('does not mark a replaced incarnation or an ended agent lost', async () => {
      const { store, clock } = h();
      await store.registerAgent(newAgent('agt_1', { key: 'k', startupTimeoutMs: 1000 }));
      await store.registerAgent(newAgent('agt_x', { key: 'k', tokenHash: 'h2', startupTimeoutMs: 1000 }));
      await registered(store, 'agt_2');
      await store.endAgent({ agentId: 'agt_2', lifecycle: 'terminated', reason: 'x' });
      clock.advance(100_000);
      expect(
        await store.markAgentsLost([
          { agentId: 'agt_1', incarnation: 1, evidence: {}, openedBy: 'c' },
          { agentId: 'agt_2', incarnation: 1, evidence: {}, openedBy: 'c' },
          { agentId: 'agt_nope', incarnation: 1, evidence: {}, openedBy: 'c' },
        ]),
      ).toEqual([null, null, null]);
      const [ok] = await store.markAgentsLost([
        { agentId: 'agt_1', incarnation: 2, evidence: {}, openedBy: 'c' },
      ]);
      expect(ok?.incarnation).toBe(2);
    });
  });

  describe('watchdog: baselines, counts, dependencies', () => {
    it('saves one baseline per coordinator, type and metric, replacing the earlier', async () => {
      const { store, clock } = h();
      const type = uniqueId('type');
      await store.saveBaselines([
        { agentType: type, metric: 'iteration_ms', coordinatorId: 'c1', histogram: [1, 2] },
        { agentType: type, metric: 'iteration_ms', coordinatorId: 'c2', histogram: [3] },
      ]);
      clock.advance(5);
      await store.saveBaselines([
        { agentType: type, metric: 'iteration_ms', coordinatorId: 'c1', histogram: [4, 5] },
      ]);
      const mine = (await store.listBaselines()).filter((b) => b.agentType === type);
      expect(mine).toEqual([
        {
          agentType: type,
          metric: 'iteration_ms',
          coordinatorId: 'c1',
          histogram: [4, 5],
          updatedAt: T0 + 5,
        },
        { agentType: type, metric: 'iteration_ms', coordinatorId: 'c2', histogram: [3], updatedAt: T0 },
      ]);
    });

    it('counts agents by what decides their status', async () => {
      const { store } = h();
      await registered(store, 'agt_1', 'agt_2', 'agt_3');
      await store.recordAgentHeartbeats([beat('agt_2', { status: 'running' })]);
      await store.applyConditionChanges([open('agt_3', 'dependency_down')]);
      const counts = await store.agentStatusCounts();
      const key = (c: { lifecycle: string; reportedStatus: string; openConditions: string[] }) =>
        `${c.lifecycle}/${c.reportedStatus}/${c.openConditions.join('+')}`;
      expect(Object.fromEntries(counts.map((c) => [key(c), c.count]))).toEqual({
        'active/idle/': 1,
        'active/running/': 1,
        'active/idle/dependency_down': 1,
      });
    });

    it('saves dependency states, one version above the last, and lists them by name', async () => {
      const { store } = h();
      const name = uniqueId('dep');
      const other = uniqueId('dep');
      const down = {
        name,
        state: 'down' as const,
        until: T0 + 5000,
        since: T0,
        reportedBy: 'agent:a',
        message: 'no route',
      };
      const first = await store.saveDependency(down);
      expect(first).toEqual({ ...down, version: 1 });
      const up = {
        ...down,
        state: 'up' as const,
        until: null,
        since: T0 + 10,
        reportedBy: 'admin',
        message: null,
      };
      expect(await store.saveDependency(up)).toEqual({ ...up, version: 2 });
      await store.saveDependency({ ...down, name: other });
      const listed = (await store.listDependencies()).filter((d) => d.name === name || d.name === other);
      expect(listed).toEqual(
        [
          ...[
            { ...up, version: 2 },
            { ...down, name: other, version: 1 },
          ],
        ].sort((a, b) => (a.name < b.name ? -1 : 1)),
      );
    });

    it('accepts NUL characters in agent labels and dependency messages', async () => {
      const { store } = h();
      const kept = (s: string) => (store.kind === 'postgres' ? s.replaceAll('\0', '\uFFFD') : s);
      const id = uniqueId('agt');
      const { agent } = await store.registerAgent(newAgent(id, { labels: { zone: 'a\0' } }));
      expect(agent.labels).toEqual({ zone: kept('a\0') });
      const saved = await store.saveDependency({
        name: uniqueId('dep'),
        state: 'down',
        until: null,
        since: T0,
        reportedBy: `agent:${id}`,
        message: 'conn\0refused',
      });
      expect(saved.message).toBe(kept('conn\0refused'));
    });
  });
}
