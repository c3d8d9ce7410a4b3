/** Contract: agent registration, lookup and the agent-level writes. */

import type { AgentCommand } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import type { NewAgent, Store } from '../store.js';
import { expectCode, type Harness, T0, uniqueId, writer } from './harness.js';

function newAgent(id: string, overrides: Partial<NewAgent> = {}): NewAgent {
  return {
    id,
    agentType: 'codex-reviewer',
    name: `host/${id}`,
    host: 'host-1',
    pid: 4242,
    taskTypes: ['work'],
    labels: { zone: 'a' },
    tokenHash: `hash-${id}`,
    ...overrides,
  };
}

const DAY = 86_400_000;

/** Queue `command` for `agentId`, keeping at most `keep` and none older than a day. */
function queueCommand(store: Store, agentId: string, command: AgentCommand, keep = 10): Promise<void> {
  return store.queueAgentCommand({ agentId, command, keep, maxAgeMs: DAY });
}

/** Take the agent's queued commands the way its heartbeat does. */
async function take(store: Store, agentId: string): Promise<AgentCommand[]> {
  const [commands] = await store.recordAgentHeartbeats([{ agentId }]);
  if (!commands) throw new Error(`agent ${agentId} not found`);
  return commands;
}

/** Register agents with these ids (commands are taken by heartbeats, which need the agent). */
async function registered(store: Store, ...ids: string[]): Promise<void> {
  for (const id of ids) await store.registerAgent(newAgent(id));
}

export function agentsContract(h: () => Harness): void {
  describe('agents', () => {
    it('registers an idle agent and reads it back by id and by token hash', async () => {
      const { store } = h();
      const agent = await store.registerAgent(newAgent('agt_1'));
      expect(agent).toEqual({
        id: 'agt_1',
        agentType: 'codex-reviewer',
        name: 'host/agt_1',
        host: 'host-1',
        pid: 4242,
        taskTypes: ['work'],
        labels: { zone: 'a' },
        status: 'idle',
        registeredAt: T0,
        lastHeartbeatAt: null,
        lastPollAt: null,
        lastPollTypes: [],
        metrics: null,
        currentTaskIds: [],
      });
      expect(await store.getAgent('agt_1')).toEqual(agent);
      expect(await store.getAgentByTokenHash('hash-agt_1')).toEqual(agent);
      expect(await store.getAgent('agt_nope')).toBeNull();
      expect(await store.getAgentByTokenHash('hash-nope')).toBeNull();
      const bare = await store.registerAgent(
        newAgent('agt_2', { host: null, pid: null, taskTypes: [], labels: {} }),
      );
      expect(bare).toMatchObject({ host: null, pid: null, taskTypes: [], labels: {} });
    });

    it('refuses a second agent with the same id or token hash', async () => {
      const { store } = h();
      await store.registerAgent(newAgent('agt_1'));
      await expectCode(store.registerAgent(newAgent('agt_1', { tokenHash: 'other' })), 'conflict');
      await expectCode(store.registerAgent(newAgent('agt_2', { tokenHash: 'hash-agt_1' })), 'conflict');
      expect(await store.listAgents()).toHaveLength(1);
    });

    it('lists agents in registration order, filtered by task type and status', async () => {
      const { store } = h();
      await store.registerAgent(newAgent('agt_1', { taskTypes: ['a', 'b'] }));
      await store.registerAgent(newAgent('agt_2', { taskTypes: ['b'] }));
      await store.registerAgent(newAgent('agt_3', { taskTypes: ['c'] }));
      await store.setAgentStatus('agt_2', 'lost');
      expect((await store.listAgents()).map((a) => a.id)).toEqual(['agt_1', 'agt_2', 'agt_3']);
      expect((await store.listAgents({ taskType: 'b' })).map((a) => a.id)).toEqual(['agt_1', 'agt_2']);
      expect((await store.listAgents({ statuses: ['idle'] })).map((a) => a.id)).toEqual(['agt_1', 'agt_3']);
      expect(
        (await store.listAgents({ taskType: 'b', statuses: ['lost', 'running'] })).map((a) => a.id),
      ).toEqual(['agt_2']);
      expect(await store.listAgents({ taskType: 'zzz' })).toEqual([]);
    });

    it('computes current tasks from the tasks it holds', async () => {
      const { store } = h();
      await store.registerAgent(newAgent('agt_a'));
      await store.registerAgent(newAgent('agt_b'));
      const claimed = await h().held(false, {}, 'agt_a');
      const running = await h().running({}, 'agt_a');
      const done = await h().running({}, 'agt_a');
      await store.completeTasks([writer(done)]);
      const agent = await store.getAgent('agt_a');
      expect(agent!.currentTaskIds).toEqual([claimed.id, running.id]);
      const listed = await store.listAgents();
      expect(listed.map((a) => a.currentTaskIds)).toEqual([[claimed.id, running.id], []]);
      expect((await store.getAgentByTokenHash('hash-agt_a'))!.currentTaskIds).toEqual([
        claimed.id,
        running.id,
      ]);
    });

    it('records heartbeats, polls and status changes', async () => {
      const { store, clock } = h();
      await store.registerAgent(newAgent('agt_1'));
      clock.advance(100);
      expect(
        await store.recordAgentHeartbeats([
          { agentId: 'agt_1', status: 'running', metrics: { rssBytes: 1000, cpuPercent: 5 } },
        ]),
      ).toEqual([[]]);
      clock.advance(100);
      expect(await store.recordAgentHeartbeats([{ agentId: 'agt_1' }])).toEqual([[]]);
      clock.advance(100);
      await store.recordPoll({ agentId: 'agt_1', types: ['work', 'other'] });
      expect(await store.getAgent('agt_1')).toMatchObject({
        status: 'running',
        lastHeartbeatAt: T0 + 200,
        metrics: { rssBytes: 1000, cpuPercent: 5 },
        lastPollAt: T0 + 300,
        lastPollTypes: ['work', 'other'],
      });
      await store.setAgentStatus('agt_1', 'stalled');
      expect((await store.getAgent('agt_1'))!.status).toBe('stalled');
      expect(await store.recordAgentHeartbeats([{ agentId: 'agt_nope' }])).toEqual([null]);
      await expectCode(store.recordPoll({ agentId: 'agt_nope', types: [] }), 'not_found');
      await expectCode(store.setAgentStatus('agt_nope', 'idle'), 'not_found');
    });

    it('no longer resolves the token of an agent that left', async () => {
      const { store } = h();
      await store.registerAgent(newAgent('agt_1'));
      await store.setAgentStatus('agt_1', 'left');
      expect(await store.getAgentByTokenHash('hash-agt_1')).toBeNull();
      expect((await store.getAgent('agt_1'))!.status).toBe('left');
    });

    it('queues commands for an agent until a take returns them, oldest first, each once', async () => {
      const { store } = h();
      const agentId = uniqueId('agt');
      const other = uniqueId('agt');
      await registered(store, agentId, other);
      expect(await take(store, agentId)).toEqual([]);
      await queueCommand(store, agentId, { type: 'wake', reason: 'stalled' });
      await queueCommand(store, agentId, { type: 'cancel', taskId: 'tsk_1' });
      // The same command about the same task waits once; about another task, or without a task, again.
      await queueCommand(store, agentId, { type: 'cancel', taskId: 'tsk_1', reason: 'x' });
      await queueCommand(store, agentId, { type: 'cancel', taskId: 'tsk_2' });
      await queueCommand(store, agentId, { type: 'wake' });
      await queueCommand(store, other, { type: 'terminate' });
      const [first, second] = await Promise.all([take(store, agentId), take(store, agentId)]);
      const taken = [...first!, ...second!];
      expect(first!.length === 0 || second!.length === 0).toBe(true);
      expect(taken).toEqual([
        { type: 'wake', reason: 'stalled' },
        { type: 'cancel', taskId: 'tsk_1' },
        { type: 'cancel', taskId: 'tsk_2' },
        { type: 'wake' },
      ]);
      expect(await take(store, agentId)).toEqual([]);
      // Taken, the same command may be queued again.
      await queueCommand(store, agentId, { type: 'cancel', taskId: 'tsk_1' });
      expect(await take(store, agentId)).toEqual([{ type: 'cancel', taskId: 'tsk_1' }]);
      expect(await take(store, other)).toEqual([{ type: 'terminate' }]);
    });

    it('records the heartbeats of several agents in one call, each taking its own commands', async () => {
      const { store, clock } = h();
      const [a, b, quiet] = [uniqueId('agt'), uniqueId('agt'), uniqueId('agt')];
      await registered(store, a, b, quiet);
      await queueCommand(store, a, { type: 'wake' });
      await queueCommand(store, b, { type: 'checkpoint' });
      await queueCommand(store, a, { type: 'terminate' });
      clock.advance(50);
      const results = await store.recordAgentHeartbeats([
        { agentId: a, status: 'running' },
        { agentId: 'agt_nobody' },
        { agentId: quiet },
        { agentId: b, metrics: { rssBytes: 7 } },
        { agentId: a, status: 'stalled' }, // named twice: the commands go with the first, the status is the last
      ]);
      expect(results).toEqual([
        [{ type: 'wake' }, { type: 'terminate' }],
        null,
        [],
        [{ type: 'checkpoint' }],
        [],
      ]);
      expect(await store.getAgent(a)).toMatchObject({ status: 'stalled', lastHeartbeatAt: T0 + 50 });
      expect(await store.getAgent(b)).toMatchObject({ status: 'idle', metrics: { rssBytes: 7 } });
      expect(await store.getAgent(quiet)).toMatchObject({ lastHeartbeatAt: T0 + 50 });
      expect(await store.recordAgentHeartbeats([{ agentId: a }, { agentId: b }])).toEqual([[], []]);
      expect(await store.recordAgentHeartbeats([])).toEqual([]);
    });

    it('keeps the newest commands of an agent up to the bound, and drops them all on clear', async () => {
      const { store } = h();
      const agentId = uniqueId('agt');
      await registered(store, agentId);
      for (let i = 0; i < 5; i++) {
        await queueCommand(store, agentId, { type: 'wake', reason: `r${i}` }, 3);
      }
      expect((await take(store, agentId)).map((c) => c.reason)).toEqual(['r2', 'r3', 'r4']);
      await queueCommand(store, agentId, { type: 'checkpoint' }, 3);
      await store.clearAgentCommands(agentId);
      expect(await take(store, agentId)).toEqual([]);
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
      const agent = await store.registerAgent(newAgent(id, { labels: { zone: 'a\0' } }));
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

    it("drops any agent's commands nobody took for longer than maxAgeMs when another is queued", async () => {
      const { store, clock } = h();
      const gone = uniqueId('agt');
      const alive = uniqueId('agt');
      await registered(store, gone, alive);
      const queue = (agentId: string, type: AgentCommand['type']) => queueCommand(store, agentId, { type });
      await queue(gone, 'wake');
      await queue(alive, 'wake');
      clock.advance(DAY);
      await queue(alive, 'checkpoint'); // a day old exactly: nothing goes yet
      clock.advance(1);
      await queue(alive, 'terminate'); // now both wakes go, whoever they were for
      expect(await take(store, gone)).toEqual([]);
      expect(await take(store, alive)).toEqual([{ type: 'checkpoint' }, { type: 'terminate' }]);
    });
  });
}
