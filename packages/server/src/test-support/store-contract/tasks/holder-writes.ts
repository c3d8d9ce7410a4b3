/** Contract: writes by the holding agent — start, heartbeats, checkpoints, logs, result refs. */
import { COORDINATOR_LOG_STREAM } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import type { HeartbeatInput } from '../../../store/store.js';
import { logCapNotice } from '../../../store/write-rules.js';
import { BACKOFF, expectCode, GRACE_MS, type Harness, T0, TIMING, writer } from '../harness.js';

export function holderWritesContract(h: () => Harness): void {
  describe('holder writes', () => {
    it('accepts NUL characters in everything written (PostgreSQL keeps U+FFFD in their place)', async () => {
      const { store } = h();
      // SQLite keeps what it is given; PostgreSQL's text and jsonb cannot hold U+0000.
      const kept = (s: string) => (store.kind === 'postgres' ? s.replaceAll('\0', '\uFFFD') : s);
      const running = await h().running({ payload: { s: 'pay\0load', 'k\0': 1 }, labels: { team: 'a\0b' } });
      expect(running.payload).toEqual({ s: kept('pay\0load'), [kept('k\0')]: 1 });
      expect(running.labels).toEqual({ team: kept('a\0b') });
      const [beat] = await store.recordHeartbeats([
        { ...writer(running), progress: 0.5, phase: 'ph\0ase', writeBackGraceMs: GRACE_MS },
      ]);
      expect(beat!.ok).toBe(true);
      await store.saveCheckpoint({ ...writer(running), state: { at: 'st\0ate' }, session: 'se\0ssion' });
      const failed = await store.failTask({
        ...writer(running),
        error: { code: 'tool_crash', message: 'exit\0ed', retryable: true },
        backoff: BACKOFF,
      });
      expect(failed.task.error).toMatchObject({ message: kept('exit\0ed') });
      expect(failed.task).toMatchObject({ phase: kept('ph\0ase') });
      expect(failed.task.checkpoint).toEqual({ at: kept('st\0ate') });
      expect(failed.task.session).toEqual(kept('se\0ssion'));
      h().clock.advance(BACKOFF.capMs);
      const again = await h().claimTask(failed.task, 'agt_a', true);
      const [done] = await store.completeTasks([{ ...writer(again), result: { out: 're\0sult' } }]);
      expect(done!.ok && done!.value.task.result).toEqual({ out: kept('re\0sult') });
    });

    it('starts a claimed task with a heartbeat lease', async () => {
      const claimed = await h().held(false);
      h().clock.advance(100);
      const started = await h().store.startTask(writer(claimed));
      expect(started.task).toMatchObject({
        status: 'running',
        version: 1,
        startedAt: T0 + 100,
        leaseExpiresAt: T0 + 100 + TIMING.heartbeatTimeoutMs,
      });
      expect(started.events).toEqual([
        expect.objectContaining({
          from: 'claimed',
          to: 'running',
          version: 1,
          attempt: 1,
          actor: 'agent:agt_a',
        }),
      ]);
    });

    it('checks not_found, then stale_version, then forbidden, then the transition', async () => {
      const { store } = h();
      const claimed = await h().held(false);
      await expectCode(store.startTask({ taskId: 'tsk_nope', agentId: 'agt_a', version: 1 }), 'not_found');
      // A stale version from another agent is stale first.
      const stale = await expectCode(
        store.startTask({ taskId: claimed.id, agentId: 'agt_z', version: 0 }),
        'stale_version',
      );
      expect(stale.details).toMatchObject({ currentVersion: 1, status: 'claimed' });
      await expectCode(store.startTask({ taskId: claimed.id, agentId: 'agt_z', version: 1 }), 'forbidden');
      expect(claimed.progressChangedAt).toBeNull();
      h().clock.advance(700);
      const started = await store.startTask(writer(claimed));
      expect(started.task.progressChangedAt).toBe(started.task.startedAt);
      expect(started.task.startedAt).toBe(h().clock.now());
      const invalid = await expectCode(store.startTask(writer(claimed)), 'invalid_transition');
      expect(invalid.details).toMatchObject({ from: 'running', to: 'running' });
    });

    it('renews a running lease on heartbeat and records progress', async () => {
      const { store, clock } = h();
      const running = await h().running({ requires: ['openai'] });
      // The stall clock starts with the attempt and moves only when progress or phase does.
      expect(running.progressChangedAt).toBe(running.startedAt);
      clock.advance(5000);
      const beat: HeartbeatInput = {
        ...writer(running),
        progress: 0.25,
        phase: 'tests',
        writeBackGraceMs: GRACE_MS,
      };
      const [o] = await store.recordHeartbeats([beat]);
      expect(o).toEqual({
        ok: true,
        value: {
          taskId: running.id,
          leaseExpiresAt: T0 + 5000 + TIMING.heartbeatTimeoutMs,
          progressed: true,
          status: 'running',
          progressChangedAt: T0 + 5000,
          stallTimeoutMs: TIMING.stallTimeoutMs,
          requires: ['openai'],
        },
      });
      expect(await h().get(running.id)).toMatchObject({
        progress: 0.25,
        phase: 'tests',
        lastHeartbeatAt: T0 + 5000,
        progressChangedAt: T0 + 5000,
        leaseExpiresAt: T0 + 5000 + TIMING.heartbeatTimeoutMs,
      });
      clock.advance(5000);
      const [same] = await store.recordHeartbeats([beat]);
      expect(same).toMatchObject({ ok: true, value: { progressed: false, progressChangedAt: T0 + 5000 } });
      const [noProgress] = await store.recordHeartbeats([{ ...writer(running), writeBackGraceMs: GRACE_MS }]);
      expect(noProgress).toMatchObject({ ok: true, value: { progressed: false } });
      expect(await h().get(running.id)).toMatchObject({
        progress: 0.25,
        phase: 'tests',
        progressChangedAt: T0 + 5000,
      });
      const [phase] = await store.recordHeartbeats([
        { ...writer(running), phase: 'lint', writeBackGraceMs: GRACE_MS },
      ]);
      expect(phase).toMatchObject({ ok: true, value: { progressed: true } });
      expect((await h().get(running.id)).progressChangedAt).toBe(T0 + 10_000);
    });

    it('never renews past the attempt deadline', async () => {
      const timing = { ...TIMING, executionTimeoutMs: 10_000, attemptDeadlineMs: 20_000 };
      const running = await h().running({ timing });
      h().clock.advance(12_000);
      const [o] = await h().store.recordHeartbeats([{ ...writer(running), writeBackGraceMs: GRACE_MS }]);
      expect(o).toMatchObject({ ok: true, value: { leaseExpiresAt: T0 + 20_000 } });
    });

    it('accepts a heartbeat for a claimed task without extending the claim lease', async () => {
      const claimed = await h().held(false);
      h().clock.advance(1000);
      const [o] = await h().store.recordHeartbeats([
        { ...writer(claimed), progress: 0.1, writeBackGraceMs: GRACE_MS },
      ]);
      expect(o).toMatchObject({
        ok: true,
        value: { status: 'claimed', leaseExpiresAt: claimed.leaseExpiresAt },
      });
      expect((await h().get(claimed.id)).lastHeartbeatAt).toBe(T0 + 1000);
    });

    it('with executionDone keeps the lease for at least the write-back grace', async () => {
      const running = await h().running();
      const [o] = await h().store.recordHeartbeats([
        { ...writer(running), executionDone: true, writeBackGraceMs: GRACE_MS },
      ]);
      expect(o).toMatchObject({ ok: true, value: { leaseExpiresAt: T0 + GRACE_MS } });
      expect((await h().get(running.id)).executionDone).toBe(true);
      // Later beats keep the flag and the grace unless told otherwise.
      const [later] = await h().store.recordHeartbeats([{ ...writer(running), writeBackGraceMs: GRACE_MS }]);
      expect(later).toMatchObject({ ok: true, value: { leaseExpiresAt: T0 + GRACE_MS } });
    });

    it('answers each heartbeat of a batch on its own', async () => {
      const { store } = h();
      const a = await h().running();
      const b = await h().running({}, 'agt_b');
      const done = await h().running();
      await store.completeTasks([writer(done)]);
      const outcomes = await store.recordHeartbeats([
        { ...writer(a), writeBackGraceMs: GRACE_MS },
        { ...writer(b), agentId: 'agt_a', writeBackGraceMs: GRACE_MS },
        { ...writer(a), version: 0, writeBackGraceMs: GRACE_MS },
        { taskId: 'tsk_nope', agentId: 'agt_a', version: 1, writeBackGraceMs: GRACE_MS },
        { ...writer(done), writeBackGraceMs: GRACE_MS },
      ]);
      expect(outcomes.map((o) => (o.ok ? 'ok' : o.code))).toEqual([
        'ok',
        'forbidden',
        'stale_version',
        'not_found',
        'invalid_transition',
      ]);
      const last = outcomes[4]!;
      expect(last.ok ? null : last.details).toMatchObject({ from: 'completed' });
    });

    it('saves checkpoint and session; a resumable next attempt receives both', async () => {
      const { store } = h();
      const running = await h().running({ resumable: true });
      await store.saveCheckpoint({ ...writer(running), state: { step: 3 }, session: { thread: 't-1' } });
      await store.saveCheckpoint({ ...writer(running), state: { step: 4 } });
      expect(await h().get(running.id)).toMatchObject({
        checkpoint: { step: 4 },
        session: { thread: 't-1' },
      });
      await h().expire(running);
      h().clock.advance(60_000);
      const next = await h().claimTask(running, 'agt_b', true);
      expect(next).toMatchObject({
        attempt: 2,
        checkpoint: { step: 4 },
        session: { thread: 't-1' },
        progress: null,
      });
    });

    it('gives a non-resumable next attempt the session but not the checkpoint', async () => {
      const { store } = h();
      const running = await h().running({ resumable: false });
      await store.saveCheckpoint({ ...writer(running), state: { step: 3 }, session: { thread: 't-9' } });
      await store.failTask({
        ...writer(running),
        error: { code: 'x', message: 'x', retryable: true },
        backoff: BACKOFF,
      });
      h().clock.advance(1000);
      const next = await h().claimTask(running, 'agt_b');
      expect(next).toMatchObject({ attempt: 2, checkpoint: null, session: { thread: 't-9' } });
    });

    it('clears the previous attempt (progress, executionDone, result ref, error) on a new claim', async () => {
      const { store } = h();
      const running = await h().running();
      const ref = { key: 'blob/1', sizeBytes: 10, contentType: 'application/json', sha256: 'ab' };
      await store.recordHeartbeats([
        { ...writer(running), progress: 0.9, executionDone: true, writeBackGraceMs: GRACE_MS },
      ]);
      await store.setResultRef({ ...writer(running), resultRef: ref });
      expect(await h().get(running.id)).toMatchObject({ resultRef: ref, executionDone: true });
      const expired = await h().expire({ ...running, leaseExpiresAt: T0 + GRACE_MS });
      expect(expired.error).toMatchObject({ code: 'heartbeat_timeout', retryable: true });
      h().clock.advance(1000);
      const next = await h().claimTask(running, 'agt_b');
      expect(next).toMatchObject({
        progress: null,
        phase: null,
        executionDone: false,
        resultRef: null,
        error: null,
        startedAt: null,
        lastHeartbeatAt: null,
      });
    });

    it('appends logs to the current attempt and reads them after a seq', async () => {
      const { store } = h();
      const running = await h().running();
      const r = await store.appendLogs({
        ...writer(running),
        lines: [
          { stream: 'stdout', text: 'one' },
          { stream: 'stderr', text: 'two' },
          { stream: 'stdout', text: 'three' },
        ],
        maxBytesPerTask: 1000,
      });
      expect(r).toEqual({ accepted: 3, truncated: false });
      expect(await store.readLogs(running.id, 0, 100)).toEqual([
        { seq: 1, at: T0, attempt: 1, stream: 'stdout', text: 'one' },
        { seq: 2, at: T0, attempt: 1, stream: 'stderr', text: 'two' },
        { seq: 3, at: T0, attempt: 1, stream: 'stdout', text: 'three' },
      ]);
      expect((await store.readLogs(running.id, 1, 1)).map((l) => l.seq)).toEqual([2]);
      expect(await store.readLogs(running.id, 3, 10)).toEqual([]);
      expect(await store.readLogs('tsk_nope', 0, 10)).toEqual([]);
    });

    it('caps logs per task in bytes and says when it dropped lines', async () => {
      const { store } = h();
      const running = await h().running();
      const write = (texts: string[]) =>
        store.appendLogs({
          ...writer(running),
          lines: texts.map((text) => ({ stream: 'stdout', text })),
          maxBytesPerTask: 10,
        });
      expect(await write(['1234', 'é5'])).toEqual({ accepted: 2, truncated: false }); // 4 + 3 bytes
      expect(await write(['abc', 'd'])).toEqual({ accepted: 1, truncated: true }); // 10 bytes: full
      expect(await write(['x'])).toEqual({ accepted: 0, truncated: true });
      // Where lines were first dropped, one line says so (only once), on the coordinator's stream.
      const lines = await store.readLogs(running.id, 0, 100);
      expect(lines.map((l) => [l.seq, l.stream, l.text])).toEqual([
        [1, 'stdout', '1234'],
        [2, 'stdout', 'é5'],
        [3, 'stdout', 'abc'],
        [4, COORDINATOR_LOG_STREAM, logCapNotice(10)],
      ]);
      expect(lines[3]!.attempt).toBe(lines[0]!.attempt);
    });

    it('tags log lines with the attempt that wrote them', async () => {
      const { store } = h();
      const first = await h().running();
      await store.appendLogs({
        ...writer(first),
        lines: [{ stream: 'stdout', text: 'a1' }],
        maxBytesPerTask: 100,
      });
      await h().expire(first);
      h().clock.advance(60_000);
      const second = await h().claimTask(first, 'agt_b', true);
      await store.appendLogs({
        ...writer(second),
        lines: [{ stream: 'stdout', text: 'a2' }],
        maxBytesPerTask: 100,
      });
      expect((await store.readLogs(first.id, 0, 10)).map((l) => [l.seq, l.attempt, l.text])).toEqual([
        [1, 1, 'a1'],
        [2, 2, 'a2'],
      ]);
    });

    it('refuses checkpoint, logs and result refs from anyone but the current holder', async () => {
      const { store } = h();
      const running = await h().running();
      const ref = { key: 'k', sizeBytes: 1, contentType: 'text/plain', sha256: '00' };
      const other = { ...writer(running), agentId: 'agt_z' };
      await expectCode(store.saveCheckpoint({ ...other, state: 1 }), 'forbidden');
      await expectCode(
        store.appendLogs({ ...other, lines: [{ stream: 'stdout', text: 'x' }], maxBytesPerTask: 100 }),
        'forbidden',
      );
      await expectCode(store.setResultRef({ ...other, resultRef: ref }), 'forbidden');
      await expectCode(
        store.saveCheckpoint({ ...writer(running), taskId: 'tsk_nope', state: 1 }),
        'not_found',
      );
      await store.completeTasks([writer(running)]);
      await expectCode(store.saveCheckpoint({ ...writer(running), state: 1 }), 'invalid_transition');
      await expectCode(store.setResultRef({ ...writer(running), resultRef: ref }), 'invalid_transition');
      await expectCode(
        store.appendLogs({
          ...writer(running),
          lines: [{ stream: 'stdout', text: 'late' }],
          maxBytesPerTask: 100,
        }),
        'invalid_transition',
      );
      const task = await h().get(running.id);
      expect(task).toMatchObject({ checkpoint: null, resultRef: null });
      expect(await store.readLogs(running.id, 0, 10)).toEqual([]);
    });
  });
}
