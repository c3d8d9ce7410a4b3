/**
 * How history is stored, checked the same way on each backend. A create writes no history row (the
 * creation entry is the task row itself); a claim that starts the task at once writes one row for
 * its two entries; entries that an earlier build stored as rows (a creation, a claim and its start
 * apart) are read as stored, once. The backend's test gives raw access to its history table.
 */
import type { TaskEvent } from '@rouse/protocol';
import { expect } from 'vitest';
import type { Store } from '../../store/store.js';
import { BACKOFF, newTask } from './harness.js';

export interface RawHistory {
  /** Every stored history row as [task id, seq, to status], by task id then seq. */
  rows(): Promise<[string, number, string][]>;
  /** Store a history row as an earlier build did (`details` null). */
  storeLegacy(taskId: string, entry: Omit<TaskEvent, 'details'>): Promise<void>;
}

export async function checkHistoryStorage(store: Store, raw: RawHistory): Promise<void> {
  await store.createTasks([newTask('tsk_1'), newTask('tsk_2'), newTask('tsk_3'), newTask('tsk_4')]);
  await store.claimTasks({ agentId: 'agt_a', types: ['work'], max: 1, start: true, backoff: BACKOFF });
  await store.claimTasks({ agentId: 'agt_a', types: ['work'], max: 1, start: false, backoff: BACKOFF });
  // tsk_1's claim and start are one row; tsk_2's claim alone is one; no creation is stored.
  expect(await raw.rows()).toEqual([
    ['tsk_1', 2, 'running'],
    ['tsk_2', 2, 'claimed'],
  ]);

  const task = async (id: string) => (await store.getTask(id))!;
  const t1 = await task('tsk_1');
  const created: Omit<TaskEvent, 'at' | 'actor'> = {
    seq: 1,
    from: null,
    to: 'created',
    version: 0,
    attempt: 0,
    reason: 'created',
    details: null,
  };
  const held = { at: t1.claimedAt, version: 1, attempt: 1, actor: 'agent:agt_a', details: null };
  const first = await store.listTaskEvents('tsk_1');
  expect(first).toEqual([
    { ...created, at: t1.createdAt, actor: 'user' },
    { ...held, seq: 2, from: 'created', to: 'claimed', reason: 'claimed' },
    { ...held, seq: 3, from: 'claimed', to: 'running', reason: 'started' },
  ]);
  expect((await store.listTaskEvents('tsk_2')).map((e) => [e.seq, e.to])).toEqual([
    [1, 'created'],
    [2, 'claimed'],
  ]);

  // As an earlier build stored them: tsk_3's creation, tsk_4's claim and start as two rows.
  const legacyAt = (await task('tsk_3')).createdAt - 5;
  const legacyCreation = { ...created, at: legacyAt, actor: 'legacy-writer' };
  await raw.storeLegacy('tsk_3', legacyCreation);
  const legacyClaim = { at: legacyAt, version: 1, attempt: 1, actor: 'legacy-writer', details: null };
  const legacyPair = [
    { ...legacyClaim, seq: 2, from: 'created', to: 'claimed', reason: 'claimed' },
    { ...legacyClaim, seq: 3, from: 'claimed', to: 'running', reason: 'started' },
  ] as const;
  for (const e of legacyPair) await raw.storeLegacy('tsk_4', e);
  expect(await store.listTaskEvents('tsk_3')).toEqual([legacyCreation]);
  const fourth = await store.listTaskEvents('tsk_4');
  expect(fourth).toEqual([{ ...created, at: (await task('tsk_4')).createdAt, actor: 'user' }, ...legacyPair]);

  // The event relay reads single entries by seq, from either form.
  const read = await store.readTransitions([
    { taskId: 'tsk_1', seq: 1 },
    { taskId: 'tsk_1', seq: 2 },
    { taskId: 'tsk_1', seq: 3 },
    { taskId: 'tsk_1', seq: 4 },
    { taskId: 'tsk_2', seq: 2 },
    { taskId: 'tsk_2', seq: 3 },
    { taskId: 'tsk_3', seq: 1 },
    { taskId: 'tsk_4', seq: 2 },
    { taskId: 'tsk_4', seq: 3 },
  ]);
  expect(read.map((r) => [r.task.id, r.event])).toEqual([
    ['tsk_1', first[0]],
    ['tsk_1', first[1]],
    ['tsk_1', first[2]],
    ['tsk_2', expect.objectContaining({ seq: 2, to: 'claimed' })],
    ['tsk_3', legacyCreation],
    ['tsk_4', fourth[1]],
    ['tsk_4', fourth[2]],
  ]);
}
