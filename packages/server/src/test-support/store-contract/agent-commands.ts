/**
 * Contract: the commands queued for agents — taken by the agent's heartbeat, oldest first, each once;
 * several agents' beats in one call; a replaced incarnation's beat takes nothing; bounds and age.
 */
import type { AgentCommand } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import { beat, DAY, newAgent, queueCommand, registered, take, takeAsCurrent } from './agent-fixtures.js';
import { type Harness, T0, uniqueId } from './harness.js';

export function agentCommandsContract(h: () => Harness): void {
  describe('agent commands', () => {
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

    it('takes commands without a heartbeat (a long-poll), oldest first, each once against racing takes and beats', async () => {
      const { store } = h();
      const agentId = uniqueId('agt');
      await registered(store, agentId);
      expect(await store.takeAgentCommands(agentId)).toEqual([]);
      for (const reason of ['1', '2', '3']) await queueCommand(store, agentId, { type: 'wake', reason });
      const [byTake, again, byBeat] = await Promise.all([
        store.takeAgentCommands(agentId),
        store.takeAgentCommands(agentId),
        take(store, agentId),
      ]);
      const all = [...byTake!, ...again!, ...byBeat!];
      expect(all.map((c) => c.reason)).toEqual(['1', '2', '3']);
      expect([byTake!, again!, byBeat!].filter((l) => l.length > 0)).toHaveLength(1);
      expect(await store.takeAgentCommands(agentId)).toEqual([]);
      expect(await store.takeAgentCommands('agt_nobody')).toEqual([]);
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
        beat(a, { status: 'running' }),
        beat('agt_nobody'),
        beat(quiet),
        beat(b, { metrics: { rssBytes: 7 } }),
        beat(a, { status: 'error' }), // named twice: the commands go with the first, the status is the last
      ]);
      expect(results.map((r) => r?.commands ?? null)).toEqual([
        [{ type: 'wake' }, { type: 'terminate' }],
        null,
        [],
        [{ type: 'checkpoint' }],
        [],
      ]);
      expect(await store.getAgent(a)).toMatchObject({ status: 'error', lastHeartbeatAt: T0 + 50 });
      expect(await store.getAgent(b)).toMatchObject({ status: 'idle', metrics: { rssBytes: 7 } });
      expect(await store.getAgent(quiet)).toMatchObject({ lastHeartbeatAt: T0 + 50 });
      expect((await store.recordAgentHeartbeats([beat(a), beat(b)])).map((r) => r?.commands)).toEqual([
        [],
        [],
      ]);
      expect(await store.recordAgentHeartbeats([])).toEqual([]);
    });

    it('hands the commands to the beat of the current incarnation when a replaced one beats in the same batch', async () => {
      const { store } = h();
      await store.registerAgent(newAgent('agt_1', { key: 'k' }));
      await store.registerAgent(newAgent('agt_x', { key: 'k', tokenHash: 'hash-2' })); // incarnation 2
      await queueCommand(store, 'agt_1', { type: 'cancel', taskId: 'tsk_1' });
      const results = await store.recordAgentHeartbeats([
        beat('agt_1', { incarnation: 1 }), // the replaced process, still beating
        beat('agt_1', { incarnation: 2 }),
      ]);
      expect(results.map((r) => r?.commands ?? null)).toEqual([null, [{ type: 'cancel', taskId: 'tsk_1' }]]);
      expect(await takeAsCurrent(store, 'agt_1')).toEqual([]);
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

    it('a command refused as already waiting drops nothing, even with the queue at its bound', async () => {
      const { store } = h();
      const agentId = uniqueId('agt');
      await registered(store, agentId);
      await queueCommand(store, agentId, { type: 'wake', reason: 'r0' }, 3);
      await queueCommand(store, agentId, { type: 'wake', reason: 'r1' }, 3);
      await queueCommand(store, agentId, { type: 'cancel', taskId: 'tsk_1' }, 3);
      await queueCommand(store, agentId, { type: 'cancel', taskId: 'tsk_1', reason: 'again' }, 3);
      expect(await take(store, agentId)).toEqual([
        { type: 'wake', reason: 'r0' },
        { type: 'wake', reason: 'r1' },
        { type: 'cancel', taskId: 'tsk_1' },
      ]);
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
