/**
 * How a task's creation entry is stored, checked the same way on each backend: a create writes no
 * history row (the entry is the task row itself), and a creation entry that an earlier build stored
 * as a row is read as stored, once. The backend's test gives raw access to its history table.
 */
import { expect } from 'vitest';
import type { Store } from '../../store/store.js';
import { BACKOFF, newTask } from './harness.js';

export interface RawHistory {
  /** Every stored history row as [task id, seq, to status], by task id then seq. */
  rows(): Promise<[string, number, string][]>;
  /** Store a creation entry as an earlier build did: seq 1, actor `legacy-writer`, at `at`. */
  storeLegacyCreation(taskId: string, at: number): Promise<void>;
}

export async function checkCreationEntryStorage(store: Store, raw: RawHistory): Promise<void> {
  await store.createTasks([newTask('tsk_1'), newTask('tsk_2')]);
  await store.claimTasks({ agentId: 'agt_a', types: ['work'], max: 1, start: true, backoff: BACKOFF });
  // The claim and the start of tsk_1 are stored; both creations are the task rows themselves.
  expect(await raw.rows()).toEqual([
    ['tsk_1', 2, 'claimed'],
    ['tsk_1', 3, 'running'],
  ]);
  const legacyAt = (await store.getTask('tsk_2'))!.createdAt - 5;
  await raw.storeLegacyCreation('tsk_2', legacyAt);

  const created = {
    seq: 1,
    from: null,
    to: 'created',
    version: 0,
    attempt: 0,
    reason: 'created',
    details: null,
  };
  const first = await store.listTaskEvents('tsk_1');
  expect(first).toEqual([
    { ...created, at: (await store.getTask('tsk_1'))!.createdAt, actor: 'user' },
    expect.objectContaining({ seq: 2, to: 'claimed' }),
    expect.objectContaining({ seq: 3, to: 'running' }),
  ]);
  const legacy = { ...created, at: legacyAt, actor: 'legacy-writer' };
  expect(await store.listTaskEvents('tsk_2')).toEqual([legacy]);
  const read = await store.readTransitions([
    { taskId: 'tsk_1', seq: 1 },
    { taskId: 'tsk_2', seq: 1 },
  ]);
  expect(read.map((r) => r.event)).toEqual([first[0], legacy]);
}
