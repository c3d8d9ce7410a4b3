/**
 * Contract: task blobs — the holder records a blob of its task (found again by task and id, and its
 * key known as a task blob's); a write of a lost lease (another version, another agent, a task no
 * longer held or unknown) is refused like any holder write and records nothing.
 */
import { describe, expect, it } from 'vitest';
import { expectCode, type Harness, T0, uniqueId } from './harness.js';

const blob = (id: string, taskId: string, version: number) => ({
  id,
  key: `${taskId}/${version}-${id}`,
  bytes: 42,
  sha256: 'ab'.repeat(32),
  contentType: 'application/x-rouse-session',
});

export function taskBlobsContract(h: () => Harness): void {
  describe('task blobs', () => {
    it('the holder records a blob; it is found by task and id, and its key is a task blob key', async () => {
      const { store, clock } = h();
      const task = await h().running();
      clock.advance(250);
      const b = blob('b1', task.id, task.version);
      const row = await store.recordTaskBlob({
        taskId: task.id,
        agentId: 'agt_a',
        version: task.version,
        blob: b,
      });
      expect(row).toEqual({ ...b, taskId: task.id, createdAt: T0 + 250 });
      expect(await store.getTaskBlob(task.id, 'b1')).toEqual(row);
      expect(await store.isTaskBlobKey(b.key)).toBe(true);
      // a claimed (not yet started) task may record too; blobs are per task
      const claimed = await h().held(false);
      await store.recordTaskBlob({
        taskId: claimed.id,
        agentId: 'agt_a',
        version: claimed.version,
        blob: blob('b1', claimed.id, claimed.version),
      });
      expect((await store.getTaskBlob(claimed.id, 'b1'))?.key).toBe(`${claimed.id}/${claimed.version}-b1`);
      expect(await store.getTaskBlob(task.id, 'nope')).toBeNull();
      expect(await store.getTaskBlob(uniqueId('tsk'), 'b1')).toBeNull();
      expect(await store.isTaskBlobKey(`${task.id}/9-zz`)).toBe(false);
    });

    it('refuses a write of a lost lease and records nothing', async () => {
      const { store } = h();
      const task = await h().running();
      const v = task.version;
      await expectCode(
        store.recordTaskBlob({
          taskId: task.id,
          agentId: 'agt_a',
          version: v + 1,
          blob: blob('x1', task.id, v + 1),
        }),
        'stale_version',
      );
      await expectCode(
        store.recordTaskBlob({
          taskId: task.id,
          agentId: 'agt_other',
          version: v,
          blob: blob('x2', task.id, v),
        }),
        'forbidden',
      );
      await expectCode(
        store.recordTaskBlob({
          taskId: uniqueId('tsk'),
          agentId: 'agt_a',
          version: 1,
          blob: blob('x3', 'tsk_none', 1),
        }),
        'not_found',
      );
      await store.completeTasks([{ taskId: task.id, agentId: 'agt_a', version: v }]);
      await expectCode(
        store.recordTaskBlob({ taskId: task.id, agentId: 'agt_a', version: v, blob: blob('x4', task.id, v) }),
        'invalid_transition',
      );
      for (const id of ['x1', 'x2', 'x4']) expect(await store.getTaskBlob(task.id, id)).toBeNull();
      expect(await store.isTaskBlobKey(`${task.id}/${v}-x2`)).toBe(false);
    });
  });
}
