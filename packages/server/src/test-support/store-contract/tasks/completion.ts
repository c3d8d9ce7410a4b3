/** Contract: complete and fail — results, idempotency per version, backoff, final states. */

import type { Json, TaskError } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import { BACKOFF, expectCode, GRACE_MS, type Harness, T0, TIMING, writer } from '../harness.js';

const RETRYABLE: TaskError = { code: 'flaky', message: 'try again', retryable: true };
const FATAL: TaskError = {
  code: 'bad_input',
  message: 'never works',
  retryable: false,
  details: { field: 'x' },
};

export function completionContract(h: () => Harness): void {
  describe('completeTasks and failTask', () => {
    it('completes a running task with its result', async () => {
      const running = await h().running();
      h().clock.advance(500);
      const [o] = await h().store.completeTasks([{ ...writer(running), result: { answer: 42 } }]);
      expect(o!.ok).toBe(true);
      const done = o!.ok ? o!.value : null;
      expect(done!.task).toMatchObject({
        status: 'completed',
        result: { answer: 42 },
        finishedAt: T0 + 500,
        leaseExpiresAt: null,
        final: true,
        version: 1,
      });
      expect(done!.events).toEqual([
        expect.objectContaining({
          from: 'running',
          to: 'completed',
          version: 1,
          attempt: 1,
          actor: 'agent:agt_a',
        }),
      ]);
      expect(await h().get(running.id)).toEqual(done!.task);
    });

    it('completeAndClaim (when offered): the completions, then the claim, one outcome per item', async () => {
      const { store } = h();
      if (store.completeAndClaim === undefined) return;
      const a = await h().running();
      const b = await h().running();
      const next = await h().create({ type: a.type });
      const { completed, claimed } = await store.completeAndClaim(
        [
          { ...writer(a), result: 'a' },
          { ...writer(b), version: b.version + 1 },
        ],
        { agentId: 'agt_a', types: [a.type], max: 5, start: true, backoff: BACKOFF },
      );
      expect(completed.map((o) => o.ok)).toEqual([true, false]);
      expect(completed[1]).toMatchObject({ ok: false, code: 'stale_version' });
      expect(claimed.map((c) => c.task.id)).toEqual([next.id]);
      expect(await h().get(a.id)).toMatchObject({ status: 'completed', result: 'a' });
      expect(await h().get(b.id)).toMatchObject({ status: 'running' });
      expect(await h().get(next.id)).toEqual(claimed[0]!.task);
      const { claimed: none } = await store.completeAndClaim([], {
        agentId: 'agt_a',
        types: [a.type],
        max: 5,
        start: false,
        backoff: BACKOFF,
      });
      expect(none).toEqual([]);
    });

    it('returns claimed and completed tasks exactly as a read does, whatever their JSON holds', async () => {
      const { store } = h();
      const tricky: Json = {
        text: 'quote " backslash \\ newline \n tab \t control \u0001 emoji 🚀 CJK 漢字 nul-free',
        numbers: [0.1, 1e21, 123456789012345, -7.25e-8, 2 ** 53 - 1, 0],
        nested: { deep: [{ a: null, b: true, c: false, d: [] }, {}], 'key with "quotes"': 'v' },
      };
      const labels = { team: 'ä-ö/ü "x"', 'env.name': 'prod\\eu' };
      const type = 'tricky';
      const first = await h().create({ type, payload: tricky, labels, requires: ['dep "1"'] });
      const second = await h().create({ type, payload: [tricky, 'second'], resumable: true });
      const [claimed] = await h().claim('agt_a', [type], 1, true);
      expect(claimed!.task.id).toBe(first.id);
      expect(claimed!.task).toEqual(await h().get(first.id));
      const viaBoth = store.completeAndClaim
        ? await store.completeAndClaim([{ ...writer(claimed!.task), result: tricky }], {
            agentId: 'agt_a',
            types: [type],
            max: 1,
            start: true,
            backoff: BACKOFF,
          })
        : {
            completed: await store.completeTasks([{ ...writer(claimed!.task), result: tricky }]),
            claimed: await h().claim('agt_a', [type], 1, true),
          };
      const done = viaBoth.completed[0]!;
      expect(done.ok && done.value.task).toEqual(await h().get(first.id));
      expect(done.ok && done.value.task.result).toEqual(tricky);
      expect(viaBoth.claimed[0]!.task).toEqual(await h().get(second.id));
      const [alone] = await store.completeTasks([{ ...writer(viaBoth.claimed[0]!.task), result: [tricky] }]);
      expect(alone!.ok && alone!.value.task).toEqual(await h().get(second.id));
    });

    it('completeAndClaimMany (when offered): each item as completeAndClaim alone, in order', async () => {
      const { store } = h();
      if (store.completeAndClaimMany === undefined) return;
      const a = await h().running({ type: 'many' });
      const b = await h().running({ type: 'many' }, 'agt_b');
      const queued = [await h().create({ type: 'many' }), await h().create({ type: 'many' })];
      queued.push(await h().create({ type: 'many' }));
      const claim = (agentId: string, max: number) => ({
        agentId,
        types: ['many'],
        max,
        start: true,
        backoff: BACKOFF,
      });
      const [first, second, third] = await store.completeAndClaimMany([
        { complete: [{ ...writer(a), result: 'a' }], claim: claim('agt_a', 2) },
        // b's holder is agt_b: agt_a's completion of it is refused; the claim still runs.
        { complete: [{ ...writer(b), agentId: 'agt_a' }], claim: claim('agt_a', 2) },
        { complete: [writer(b)], claim: claim('agt_b', 2) },
      ]);
      expect(first!.completed.map((o) => o.ok)).toEqual([true]);
      expect(first!.claimed.map((c) => c.task.id)).toEqual([queued[0]!.id, queued[1]!.id]);
      expect(second!.completed[0]).toMatchObject({ ok: false, code: 'forbidden' });
      expect(second!.claimed.map((c) => c.task.id)).toEqual([queued[2]!.id]);
      expect(third!.completed.map((o) => o.ok)).toEqual([true]);
      expect(third!.claimed).toEqual([]);
      expect(await h().get(a.id)).toMatchObject({ status: 'completed', result: 'a' });
      expect(await h().get(b.id)).toMatchObject({ status: 'completed' });
      for (const t of queued)
        expect(await h().get(t.id)).toMatchObject({ status: 'running', agentId: 'agt_a' });
    });

    it('keeps a recorded result ref on complete, or takes the one given', async () => {
      const { store } = h();
      const ref = { key: 'r/1', sizeBytes: 70_000, contentType: 'application/json', sha256: 'ff' };
      const a = await h().running();
      await store.setResultRef({ ...writer(a), resultRef: ref });
      await store.completeTasks([writer(a)]);
      expect(await h().get(a.id)).toMatchObject({ status: 'completed', resultRef: ref, result: null });
      const b = await h().running();
      await store.completeTasks([{ ...writer(b), resultRef: ref }]);
      expect((await h().get(b.id)).resultRef).toEqual(ref);
    });

    it('is idempotent per version: a repeated complete returns the task unchanged, no new history', async () => {
      const { store } = h();
      const running = await h().running();
      const [first] = await store.completeTasks([{ ...writer(running), result: 1 }]);
      const events = await h().events(running.id);
      h().clock.advance(1000);
      const [again] = await store.completeTasks([{ ...writer(running), result: 2 }]);
      expect(again).toEqual({ ok: true, value: { task: first!.ok ? first!.value.task : null, events: [] } });
      expect(await h().events(running.id)).toEqual(events);
      expect((await h().get(running.id)).result).toBe(1);
    });

    it('answers each item of a complete batch on its own, in order', async () => {
      const { store } = h();
      const a = await h().running();
      const b = await h().held(false);
      const c = await h().running({}, 'agt_b');
      const outcomes = await store.completeTasks([
        writer(a),
        writer(b),
        { ...writer(c), agentId: 'agt_a' },
        { ...writer(a), version: 7 },
        { taskId: 'tsk_nope', agentId: 'agt_a', version: 1 },
      ]);
      expect(outcomes.map((o) => (o.ok ? 'ok' : o.code))).toEqual([
        'ok',
        'invalid_transition',
        'forbidden',
        'stale_version',
        'not_found',
      ]);
      expect((await h().get(b.id)).status).toBe('claimed');
      expect((await h().get(c.id)).status).toBe('running');
    });

    it('a stale holder cannot complete after the task moved on; the new holder can', async () => {
      const { store } = h();
      const first = await h().running();
      await h().expire(first);
      h().clock.advance(60_000);
      const second = await h().claimTask(first, 'agt_b', true);
      const [late] = await store.completeTasks([{ ...writer(first), result: 'late' }]);
      expect(late).toMatchObject({ ok: false, code: 'stale_version', details: { currentVersion: 2 } });
      const [ok] = await store.completeTasks([{ ...writer(second), result: 'fresh' }]);
      expect(ok!.ok).toBe(true);
      expect(await h().get(first.id)).toMatchObject({
        status: 'completed',
        result: 'fresh',
        version: 2,
        agentId: 'agt_b',
      });
    });

    it('backs off 1 s, 2 s, 4 s and is final after maxAttempts', async () => {
      const { store, clock } = h();
      let task = await h().running({ maxAttempts: 4 });
      const delays: number[] = [];
      for (let attempt = 1; attempt <= 4; attempt++) {
        const failed = await store.failTask({ ...writer(task), error: RETRYABLE, backoff: BACKOFF });
        expect(failed.task).toMatchObject({
          status: 'failed',
          attempt,
          error: RETRYABLE,
          leaseExpiresAt: null,
        });
        expect(failed.events).toEqual([
          expect.objectContaining({
            from: 'running',
            to: 'failed',
            version: attempt,
            attempt,
            reason: 'failed',
          }),
        ]);
        if (attempt === 4) {
          expect(failed.task).toMatchObject({ nextAttemptAt: null, final: true, finishedAt: clock.now() });
          break;
        }
        expect(failed.task.final).toBe(false);
        expect(failed.task.finishedAt).toBeNull();
        delays.push(failed.task.nextAttemptAt! - clock.now());
        clock.set(failed.task.nextAttemptAt!);
        task = await h().claimTask(task, 'agt_a', true);
      }
      expect(delays).toEqual([1000, 2000, 4000]);
      clock.advance(3_600_000);
      expect(await h().claim('agt_a', [task.type])).toEqual([]);
    });

    it('caps the backoff', async () => {
      const running = await h().running({ maxAttempts: 10 });
      const failed = await h().store.failTask({
        ...writer(running),
        error: RETRYABLE,
        backoff: { baseMs: 1000, capMs: 500, jitter: 0 },
      });
      expect(failed.task.nextAttemptAt).toBe(T0 + 500);
    });

    it("uses the task's own backoff (its timing's) over the one given, on fail and on expiry", async () => {
      const timing = { ...TIMING, backoff: { baseMs: 7000, capMs: 60_000, jitter: 0 } };
      const running = await h().running({ maxAttempts: 10, timing });
      expect(running.timing.backoff).toEqual({ baseMs: 7000, capMs: 60_000, jitter: 0 });
      const failed = await h().store.failTask({ ...writer(running), error: RETRYABLE, backoff: BACKOFF });
      expect(failed.task.nextAttemptAt).toBe(T0 + 7000);
      const again = await h().running({ maxAttempts: 10, timing });
      const expired = await h().expire(again, BACKOFF);
      expect(expired.nextAttemptAt! - h().clock.now()).toBe(7000);
    });

    it('is final at once for a non-retryable error', async () => {
      const running = await h().running({ maxAttempts: 4 });
      const failed = await h().store.failTask({ ...writer(running), error: FATAL, backoff: BACKOFF });
      expect(failed.task).toMatchObject({
        status: 'failed',
        nextAttemptAt: null,
        final: true,
        error: FATAL,
        attempt: 1,
      });
      expect(failed.events[0]!.details).toMatchObject({ error: FATAL, nextAttemptAt: null });
    });

    it('is idempotent per version: a repeated fail returns the task unchanged', async () => {
      const { store } = h();
      const running = await h().running();
      const first = await store.failTask({ ...writer(running), error: RETRYABLE, backoff: BACKOFF });
      h().clock.advance(10);
      const again = await store.failTask({ ...writer(running), error: FATAL, backoff: BACKOFF });
      expect(again).toEqual({ task: first.task, events: [] });
      expect(await h().events(running.id)).toHaveLength(4);
    });

    it('refuses fail from a claimed task, a stale version or another agent', async () => {
      const { store } = h();
      const claimed = await h().held(false);
      await expectCode(
        store.failTask({ ...writer(claimed), error: RETRYABLE, backoff: BACKOFF }),
        'invalid_transition',
      );
      const running = await h().running();
      await expectCode(
        store.failTask({ ...writer(running), version: 0, error: RETRYABLE, backoff: BACKOFF }),
        'stale_version',
      );
      await expectCode(
        store.failTask({ ...writer(running), agentId: 'agt_z', error: RETRYABLE, backoff: BACKOFF }),
        'forbidden',
      );
      expect((await h().get(running.id)).status).toBe('running');
    });

    it('completes from an uploaded result only after executionDone, at that version', async () => {
      const { store } = h();
      const ref = { key: 'r/2', sizeBytes: 5, contentType: 'text/plain', sha256: 'aa' };
      const running = await h().running();
      expect(await store.completeFromResultRef({ taskId: running.id, version: 1 })).toBeNull();
      await store.setResultRef({ ...writer(running), resultRef: ref });
      expect(await store.completeFromResultRef({ taskId: running.id, version: 1 })).toBeNull();
      await store.recordHeartbeats([{ ...writer(running), executionDone: true, writeBackGraceMs: GRACE_MS }]);
      expect(await store.completeFromResultRef({ taskId: running.id, version: 0 })).toBeNull();
      const done = await store.completeFromResultRef({ taskId: running.id, version: 1 });
      expect(done!.task).toMatchObject({ status: 'completed', resultRef: ref, final: true });
      expect(done!.events).toEqual([
        expect.objectContaining({
          from: 'running',
          to: 'completed',
          actor: 'coordinator',
          reason: 'completed_from_result_ref',
        }),
      ]);
      expect(await store.completeFromResultRef({ taskId: running.id, version: 1 })).toBeNull();
    });
  });
}
