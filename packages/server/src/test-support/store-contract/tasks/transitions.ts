/**
 * Contract: the transition table holds through every operation. Every (state, operation) pair is
 * tried; whatever succeeds is a transition of the table, whatever fails changes nothing; every pair
 * of the table is reachable. Then a property: random operation sequences keep the history equal to
 * the status path, and stale writes never land.
 */

import type { Task, TaskEvent, TaskStatus } from '@rouse/protocol';
import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isRouseError } from '../../../core/errors.js';
import { canTransition, HELD_STATUSES, isFinal, TRANSITIONS } from '../../../core/transitions.js';
import { GRACE_MS, type Harness, NO_BACKOFF, uniqueId, writer } from '../harness.js';

type Op = (h: Harness, task: Task) => Promise<unknown>;

const REF = { key: 'r', sizeBytes: 1, contentType: 'text/plain', sha256: '0' };
const OTHER_AGENT = 'agt_other';

/** Every operation that can move a task, acting on what the task is now. */
const OPS: Record<string, Op> = {
  claim: (h, t) =>
    h.store.claimTasks({ agentId: OTHER_AGENT, types: [t.type], max: 1, start: false, backoff: NO_BACKOFF }),
  claimStart: (h, t) =>
    h.store.claimTasks({ agentId: OTHER_AGENT, types: [t.type], max: 1, start: true, backoff: NO_BACKOFF }),
  start: (h, t) => h.store.startTask(writer(t, t.agentId ?? OTHER_AGENT)),
  heartbeat: (h, t) =>
    h.store.recordHeartbeats([{ ...writer(t, t.agentId ?? OTHER_AGENT), writeBackGraceMs: GRACE_MS }]),
  complete: (h, t) => h.store.completeTasks([writer(t, t.agentId ?? OTHER_AGENT)]),
  failRetryable: (h, t) =>
    h.store.failTask({
      ...writer(t, t.agentId ?? OTHER_AGENT),
      error: { code: 'x', message: 'x', retryable: true },
      backoff: NO_BACKOFF,
    }),
  failFatal: (h, t) =>
    h.store.failTask({
      ...writer(t, t.agentId ?? OTHER_AGENT),
      error: { code: 'x', message: 'x', retryable: false },
      backoff: NO_BACKOFF,
    }),
  expire: async (h, t) => {
    h.clock.advance(10 * 86_400_000);
    return h.store.expireLease({ taskId: t.id, version: t.version, backoff: NO_BACKOFF });
  },
  completeFromRef: async (h, t) => {
    const w = writer(t, t.agentId ?? OTHER_AGENT);
    await h.store.recordHeartbeats([{ ...w, executionDone: true, writeBackGraceMs: GRACE_MS }]);
    await h.store.setResultRef({ ...w, resultRef: REF }).catch(() => undefined);
    return h.store.completeFromResultRef({ taskId: t.id, version: t.version });
  },
  cancel: (h, t) => h.store.cancelTask({ taskId: t.id, reason: 'test', actor: 'admin' }),
  retry: (h, t) => h.store.retryTask({ taskId: t.id, actor: 'admin' }),
  release: (h, t) => h.store.releaseAgentTasks({ agentId: t.agentId ?? OTHER_AGENT, reason: 'agent_left' }),
};

/** Operations that carry the agent's version (the others act on what the task is now). */
const FENCED_OPS = new Set([
  'start',
  'heartbeat',
  'complete',
  'failRetryable',
  'failFatal',
  'expire',
  'completeFromRef',
]);

/** Ways to put a fresh task (of its own type) in each state, final and not. */
const REACH: Record<string, (h: Harness) => Promise<Task>> = {
  created: (h) => h.create({ type: uniqueId('type') }),
  claimed: (h) => h.held(false),
  running: (h) => h.held(true),
  completed: async (h) => {
    const t = await h.held(true);
    await h.store.completeTasks([writer(t)]);
    return h.get(t.id);
  },
  failedRetrying: async (h) => {
    const t = await h.held(true, { maxAttempts: 3 });
    await OPS.failRetryable!(h, t);
    return h.get(t.id);
  },
  failedFinal: async (h) => {
    const t = await h.held(true, { maxAttempts: 3 });
    await OPS.failFatal!(h, t);
    return h.get(t.id);
  },
  timeoutRetrying: async (h) => h.expire(await h.held(false, { maxAttempts: 3 }), NO_BACKOFF),
  timeoutFinal: async (h) => h.expire(await h.held(true, { maxAttempts: 1 }), NO_BACKOFF),
  cancelled: async (h) => {
    const t = await h.create({ type: uniqueId('type') });
    return (await h.store.cancelTask({ taskId: t.id, reason: 'r', actor: 'admin' })).task;
  },
};

function transitionsOf(events: TaskEvent[]): [TaskStatus | null, TaskStatus][] {
  return events.filter((e) => e.from !== e.to).map((e) => [e.from, e.to]);
}

/** The history is one unbroken path from creation to the current status. */
function expectHistoryMatches(task: Task, events: TaskEvent[]): void {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  expect(events[0]).toMatchObject({ from: null, to: 'created', version: 0 });
  for (let i = 1; i < events.length; i++) {
    const [prev, e] = [events[i - 1]!, events[i]!];
    expect(e.from, `event ${e.seq} starts where ${prev.seq} ended`).toBe(prev.to);
    if (e.from !== e.to) expect(canTransition(e.from!, e.to), `${e.from}→${e.to}`).toBe(true);
    expect(e.version).toBeGreaterThanOrEqual(prev.version);
  }
  expect(events.at(-1)!.to).toBe(task.status);
  const claims = events.filter((e) => e.to === 'claimed');
  expect(claims.map((e) => e.version)).toEqual(claims.map((_, i) => i + 1));
  expect(task.version).toBe(claims.length);
  expect(task.attempt).toBe(claims.length);
  expect(task.final).toBe(isFinal(task.status, task.nextAttemptAt));
  expect(task.leaseExpiresAt !== null).toBe(HELD_STATUSES.includes(task.status));
}

export function transitionsContract(h: () => Harness): void {
  describe('the transition table', () => {
    it('every operation from every state is a table transition or changes nothing; every pair is reached', async () => {
      const reached = new Set<string>();
      for (const [stateName, reach] of Object.entries(REACH)) {
        for (const [opName, op] of Object.entries(OPS)) {
          const task = await reach(h());
          const before = await h().snapshot(task.id);
          const failed = await op(h(), task).then(
            () => false,
            (err: unknown) => {
              expect(isRouseError(err), `${opName} on ${stateName} throws a RouseError: ${String(err)}`).toBe(
                true,
              );
              return true;
            },
          );
          const after = await h().snapshot(task.id);
          const added = after.events.slice(before.events.length);
          if (failed) expect(after, `${opName} on ${stateName} failed and changed nothing`).toEqual(before);
          for (const [from, to] of transitionsOf(added)) {
            expect(canTransition(from!, to), `${opName} on ${stateName}: ${from}→${to}`).toBe(true);
            reached.add(`${from}→${to}`);
          }
          if (added.length === 0 && after.task!.status !== before.task!.status) {
            throw new Error(`${opName} on ${stateName} changed the status without history`);
          }
          expectHistoryMatches(after.task!, after.events);
        }
      }
      const table = Object.entries(TRANSITIONS).flatMap(([from, tos]) => tos.map((to) => `${from}→${to}`));
      expect([...reached].sort()).toEqual(table.sort());
    });

    it('fences: a stale version changes nothing and leaves no history, for every agent write', async () => {
      const first = await h().running({ maxAttempts: 5 });
      await h().expire(first, NO_BACKOFF);
      const current = await h().claimTask(first, 'agt_b', true);
      const stale = writer(first);
      const store = h().store;
      const before = await h().snapshot(first.id);
      const attempts: Promise<unknown>[] = [
        store.startTask(stale),
        store.saveCheckpoint({ ...stale, state: 'x' }),
        store.appendLogs({ ...stale, lines: [{ stream: 'stdout', text: 'x' }], maxBytesPerTask: 100 }),
        store.setResultRef({ ...stale, resultRef: REF }),
        store.failTask({
          ...stale,
          error: { code: 'x', message: 'x', retryable: true },
          backoff: NO_BACKOFF,
        }),
      ];
      // All at once: they run concurrently, and a rejection must find its handler at once.
      await Promise.all(attempts.map((p) => expect(p).rejects.toMatchObject({ code: 'stale_version' })));
      const [beat] = await store.recordHeartbeats([{ ...stale, progress: 1, writeBackGraceMs: GRACE_MS }]);
      const [done] = await store.completeTasks([{ ...stale, result: 'late' }]);
      expect([beat, done]).toMatchObject([
        { ok: false, code: 'stale_version', details: { currentVersion: current.version } },
        { ok: false, code: 'stale_version' },
      ]);
      expect(await h().snapshot(first.id)).toEqual(before);
      expect(await store.readLogs(first.id, 0, 10)).toEqual([]);
    });

    it('random operation sequences keep the history equal to the status path (property)', async () => {
      const opNames = Object.keys(OPS);
      const step = fc.record({
        op: fc.constantFrom(...opNames, 'advance'),
        agent: fc.constantFrom('agt_p', 'agt_q'),
        stale: fc.boolean(),
        ms: fc.integer({ min: 0, max: 40_000 }),
      });
      await fc.assert(
        fc.asyncProperty(
          fc.array(step, { minLength: 1, maxLength: 25 }),
          fc.integer({ min: 1, max: 4 }),
          async (steps, maxAttempts) => {
            const harness = h();
            const created = await harness.create({ type: uniqueId('prop'), maxAttempts });
            for (const s of steps) {
              if (s.op === 'advance') {
                harness.clock.advance(s.ms);
                continue;
              }
              const now = await harness.get(created.id);
              // Act as a chosen agent, sometimes with the previous (stale) version.
              const seen: Task = {
                ...now,
                agentId: now.agentId ?? s.agent,
                version: s.stale ? Math.max(0, now.version - 1) : now.version,
              };
              const before = await harness.snapshot(created.id);
              const ok = await OPS[s.op]!(harness, seen).then(
                () => true,
                (err: unknown) => {
                  if (!isRouseError(err)) throw err;
                  return false;
                },
              );
              const after = await harness.snapshot(created.id);
              if (!ok) expect(after).toEqual(before);
              if (s.stale && now.version > 0 && FENCED_OPS.has(s.op)) {
                expect(after.events.length, `stale ${s.op} must not write`).toBe(before.events.length);
              }
            }
            const task = await harness.get(created.id);
            const events = await harness.events(created.id);
            expectHistoryMatches(task, events);
            return true;
          },
        ),
        { numRuns: 60 },
      );
    });
  });
}
