/**
 * Contract: interventions — one open per agent, condition and task however many coordinators try at
 * once; pending ⇄ held, then ended once (evidence merged); reads newest first, filtered and paged.
 */
import { describe, expect, it } from 'vitest';
import type { OpenInterventionInput } from '../../store/store.js';
import { type Harness, T0, uniqueId } from './harness.js';

function open(agentId: string, overrides: Partial<OpenInterventionInput> = {}): OpenInterventionInput {
  return {
    id: uniqueId('itv'),
    agentId,
    incarnation: 1,
    taskId: null,
    condition: 'progress_stalled',
    action: 'wake',
    rung: 0,
    attempt: 1,
    reason: 'progress stalled for 20 s',
    evidence: { progress: 3, stalledForMs: 20_000 },
    actor: 'coordinator:c1',
    commandId: null,
    coordinatorId: 'c1',
    shardEpoch: 4,
    ...overrides,
  };
}

export function interventionsContract(h: () => Harness): void {
  describe('interventions', () => {
    it('records an intervention with its evidence and who acted; ends it once, merging the evidence', async () => {
      const { store, clock } = h();
      const agentId = uniqueId('agt');
      const input = open(agentId);
      const opened = await store.openIntervention(input);
      expect(opened).toEqual({
        id: input.id,
        agentId,
        incarnation: 1,
        taskId: null,
        condition: 'progress_stalled',
        action: 'wake',
        rung: 0,
        attempt: 1,
        state: 'pending',
        reason: 'progress stalled for 20 s',
        evidence: { progress: 3, stalledForMs: 20_000 },
        actor: 'coordinator:c1',
        commandId: null,
        coordinatorId: 'c1',
        shardEpoch: 4,
        startedAt: T0,
        endedAt: null,
      });
      expect(await store.getIntervention(input.id)).toEqual(opened);
      clock.advance(1500);
      const ended = await store.endIntervention({
        id: input.id,
        state: 'succeeded',
        reason: 'progress moved',
        evidence: { progressAfter: 4 },
      });
      expect(ended).toMatchObject({
        state: 'succeeded',
        reason: 'progress moved',
        evidence: { progress: 3, stalledForMs: 20_000, progressAfter: 4 },
        endedAt: T0 + 1500,
      });
      // Ended is final.
      expect(await store.endIntervention({ id: input.id, state: 'failed', reason: 'x' })).toBeNull();
      expect(await store.holdIntervention({ id: input.id, held: true })).toBeNull();
      expect(await store.getIntervention(input.id)).toEqual(ended);
      expect(await store.getIntervention('itv_nope')).toBeNull();
      expect(await store.endIntervention({ id: 'itv_nope', state: 'skipped', reason: 'x' })).toBeNull();
    });

    it('one open intervention per agent, condition and task: a second (or a racing one) is refused', async () => {
      const { store } = h();
      const agentId = uniqueId('agt');
      const racing = await Promise.all(
        ['c1', 'c2', 'c3', 'c4'].map((c) =>
          store.openIntervention(open(agentId, { coordinatorId: c, actor: `coordinator:${c}` })),
        ),
      );
      const won = racing.filter((r) => r !== null);
      expect(won).toHaveLength(1);
      // Another condition, another task, another agent: open besides it.
      expect(await store.openIntervention(open(agentId, { condition: 'resource_runaway' }))).not.toBeNull();
      expect(await store.openIntervention(open(agentId, { taskId: 'tsk_1' }))).not.toBeNull();
      expect(await store.openIntervention(open(uniqueId('agt')))).not.toBeNull();
      // Held counts as open; once it ends, the next rung may open.
      await store.holdIntervention({ id: won[0]!.id, held: true });
      expect(
        await store.openIntervention(open(agentId, { rung: 1, action: 'snapshot_and_restart' })),
      ).toBeNull();
      await store.endIntervention({ id: won[0]!.id, state: 'failed', reason: 'no progress after the wake' });
      expect(
        await store.openIntervention(open(agentId, { rung: 1, action: 'snapshot_and_restart' })),
      ).toMatchObject({ rung: 1, action: 'snapshot_and_restart', state: 'pending' });
    });

    it('pending ⇄ held while open; opened held when asked', async () => {
      const { store } = h();
      const agentId = uniqueId('agt');
      const held = await store.openIntervention(open(agentId, { condition: 'dependency_down', held: true }));
      expect(held?.state).toBe('held');
      expect((await store.holdIntervention({ id: held!.id, held: false }))?.state).toBe('pending');
      expect((await store.holdIntervention({ id: held!.id, held: true }))?.state).toBe('held');
      expect(
        (await store.endIntervention({ id: held!.id, state: 'skipped', reason: 'the agent left' }))?.state,
      ).toBe('skipped');
    });

    it('notes the steps of an open one: evidence keys set, the last command kept; nothing once ended', async () => {
      const { store } = h();
      const agentId = uniqueId('agt');
      const opened = await store.openIntervention(
        open(agentId, { action: 'snapshot_and_restart', evidence: { gapMs: 9000, phase: 'opened' } }),
      );
      const first = await store.noteIntervention({
        id: opened!.id,
        evidence: { phase: 'checkpoint', checkpointAt: 5 },
        commandId: 'cmd_checkpoint',
      });
      expect(first).toMatchObject({
        state: 'pending',
        commandId: 'cmd_checkpoint',
        evidence: { gapMs: 9000, phase: 'checkpoint', checkpointAt: 5 },
      });
      // Without a command the last one stays; whole values replace the key's.
      const second = await store.noteIntervention({
        id: opened!.id,
        evidence: { checkpointAck: { outcome: 'done' } },
      });
      expect(second?.commandId).toBe('cmd_checkpoint');
      const third = await store.noteIntervention({
        id: opened!.id,
        evidence: { phase: 'restart', checkpointAck: { outcome: 'failed' } },
        commandId: 'cmd_restart',
      });
      expect(third).toMatchObject({
        commandId: 'cmd_restart',
        evidence: { gapMs: 9000, phase: 'restart', checkpointAt: 5, checkpointAck: { outcome: 'failed' } },
      });
      expect(
        (await store.listInterventions({ commandId: 'cmd_restart' })).interventions.map((i) => i.id),
      ).toEqual([opened!.id]);
      await store.endIntervention({ id: opened!.id, state: 'succeeded', reason: 'restarted' });
      expect(await store.noteIntervention({ id: opened!.id, evidence: { late: true } })).toBeNull();
      expect(await store.noteIntervention({ id: 'itv_nope', evidence: { late: true } })).toBeNull();
    });

    it('lists newest first, by agent, task and state, a page at a time', async () => {
      const { store } = h();
      const agentId = uniqueId('agt');
      const other = uniqueId('agt');
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const it = await store.openIntervention(
          open(agentId, { attempt: i + 1, taskId: i === 2 ? 'tsk_x' : null }),
        );
        ids.push(it!.id);
        if (i !== 2)
          await store.endIntervention({ id: it!.id, state: 'failed', reason: `attempt ${i + 1} failed` });
      }
      await store.openIntervention(open(other));
      const mine = await store.listInterventions({ agentId });
      expect(mine.interventions.map((x) => x.id)).toEqual([...ids].reverse());
      expect(mine.nextCursor).toBeNull();
      const page1 = await store.listInterventions({ agentId, limit: 2 });
      expect(page1.interventions.map((x) => x.id)).toEqual([ids[4], ids[3]]);
      const page2 = await store.listInterventions({ agentId, limit: 2, cursor: page1.nextCursor! });
      expect(page2.interventions.map((x) => x.id)).toEqual([ids[2], ids[1]]);
      const page3 = await store.listInterventions({ agentId, limit: 2, cursor: page2.nextCursor! });
      expect(page3.interventions.map((x) => x.id)).toEqual([ids[0]]);
      expect(page3.nextCursor).toBeNull();
      expect((await store.listInterventions({ taskId: 'tsk_x' })).interventions.map((x) => x.id)).toEqual([
        ids[2],
      ]);
      // The intervention that sent a command, found by the command's id (its acknowledgement).
      const sent = await store.openIntervention(
        open(other, { condition: 'manual', commandId: 'cmd_1', rung: null }),
      );
      expect(sent).toMatchObject({ commandId: 'cmd_1', condition: 'manual', rung: null });
      expect((await store.listInterventions({ commandId: 'cmd_1' })).interventions).toEqual([sent]);
      expect((await store.listInterventions({ commandId: 'cmd_2' })).interventions).toEqual([]);
      const stillOpen = await store.listInterventions({ agentId, states: ['pending', 'held'] });
      expect(stillOpen.interventions.map((x) => x.id)).toEqual([ids[2]]);
      expect(
        (await store.listInterventions({ states: ['pending'] })).interventions.length,
      ).toBeGreaterThanOrEqual(2);
    });
  });
}
