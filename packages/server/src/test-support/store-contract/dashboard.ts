/**
 * Contract: what the dashboard keeps and reads — one-time login codes (taken once, also when racing;
 * never after they expire), sessions (touched while used, refused once idle too long or logged out;
 * a code is not a session nor the other way round), the sweep of expired rows; the task search
 * (id, idempotency key, a word of the payload or of the labels, any case, with the other filters and
 * paging) and the overview's counts.
 */
import { describe, expect, it } from 'vitest';
import { BACKOFF, type Harness, T0, uniqueId, writer } from './harness.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export function dashboardContract(h: () => Harness): void {
  describe('dashboard sessions', () => {
    it('a login code is taken once, by exactly one of two racing uses, and not after it expires', async () => {
      const { store, clock } = h();
      await store.saveSession({
        key: 'code-1',
        kind: 'login',
        role: 'admin',
        csrfToken: '',
        ttlMs: 5 * MINUTE,
      });
      const both = await Promise.all([store.takeLoginCode('code-1'), store.takeLoginCode('code-1')]);
      expect(both.filter((r) => r !== null)).toEqual([{ role: 'admin' }]);
      expect(await store.takeLoginCode('code-1')).toBeNull();

      await store.saveSession({
        key: 'code-2',
        kind: 'login',
        role: 'readonly',
        csrfToken: '',
        ttlMs: 5 * MINUTE,
      });
      clock.advance(5 * MINUTE);
      expect(await store.takeLoginCode('code-2')).toBeNull();
      expect(await store.takeLoginCode('never-saved')).toBeNull();
    });

    it('a session lives while it is used, ends when idle too long, and a code is not a session', async () => {
      const { store, clock } = h();
      await store.saveSession({
        key: 'sess-1',
        kind: 'session',
        role: 'readonly',
        csrfToken: 'c1',
        ttlMs: HOUR,
      });
      expect(await store.touchSession({ key: 'sess-1', idleMs: HOUR })).toEqual({
        role: 'readonly',
        csrfToken: 'c1',
        createdAt: T0,
        expiresAt: T0 + HOUR,
      });
      clock.advance(50 * MINUTE);
      expect((await store.touchSession({ key: 'sess-1', idleMs: HOUR }))?.expiresAt).toBe(
        T0 + 50 * MINUTE + HOUR,
      );
      clock.advance(50 * MINUTE); // 100 minutes after creation, 50 after the last use: still alive
      expect(await store.touchSession({ key: 'sess-1', idleMs: HOUR })).not.toBeNull();
      clock.advance(HOUR); // idle a full hour
      expect(await store.touchSession({ key: 'sess-1', idleMs: HOUR })).toBeNull();

      await store.saveSession({ key: 'code-3', kind: 'login', role: 'admin', csrfToken: '', ttlMs: HOUR });
      expect(await store.touchSession({ key: 'code-3', idleMs: HOUR })).toBeNull();
      await store.saveSession({
        key: 'sess-2',
        kind: 'session',
        role: 'admin',
        csrfToken: 'c2',
        ttlMs: HOUR,
      });
      expect(await store.takeLoginCode('sess-2')).toBeNull();
      expect(await store.touchSession({ key: 'sess-2', idleMs: HOUR })).toMatchObject({ role: 'admin' });
    });

    it('log out ends a session; the sweep deletes expired rows only', async () => {
      const { store, clock } = h();
      await store.saveSession({ key: 'a', kind: 'session', role: 'admin', csrfToken: 'x', ttlMs: HOUR });
      await store.saveSession({ key: 'b', kind: 'session', role: 'admin', csrfToken: 'y', ttlMs: 3 * HOUR });
      await store.saveSession({ key: 'c', kind: 'login', role: 'admin', csrfToken: '', ttlMs: MINUTE });
      expect(await store.deleteSession('a')).toBe(true);
      expect(await store.deleteSession('a')).toBe(false);
      expect(await store.touchSession({ key: 'a', idleMs: HOUR })).toBeNull();
      expect(await store.deleteSession('c')).toBe(false); // a login code is not ended by log out
      clock.advance(2 * HOUR);
      expect(await store.deleteExpiredSessions({ limit: 100 })).toBe(1); // c; b lives
      expect(await store.deleteExpiredSessions({ limit: 100 })).toBe(0);
      expect(await store.touchSession({ key: 'b', idleMs: HOUR })).not.toBeNull();
    });
  });

  describe('task search and overview counts', () => {
    it('finds a task by id, idempotency key, a word of its payload or labels, in any case', async () => {
      const type = uniqueId('search');
      const invoice = await h().create({
        type,
        payload: { customer: 'Zanzibar Trading', lines: [1, 2] },
        idempotencyKey: 'order-4711',
        labels: { team: 'Billing' },
      });
      const other = await h().create({ type, payload: { customer: 'Acme' } });
      const ids = async (search: string, extra = {}) =>
        (await h().store.listTasks({ search, ...extra })).tasks.map((t) => t.id);
      expect(await ids('order-4711')).toEqual([invoice.id]);
      expect(await ids('order-47')).toEqual([]); // the key matches whole, not a part of it
      expect(await ids(invoice.id)).toEqual([invoice.id]);
      expect(await ids('zanzibar')).toEqual([invoice.id]);
      expect(await ids('BILLING')).toEqual([invoice.id]);
      expect(await ids('acme')).toEqual([other.id]);
      expect(await ids('customer')).toEqual([other.id, invoice.id]); // newest first
      expect(await ids('nowhere')).toEqual([]);
      // With the other filters and paging.
      expect(await ids('customer', { statuses: ['created'] })).toEqual([other.id, invoice.id]);
      expect(await ids('customer', { statuses: ['running'] })).toEqual([]);
      expect(await ids('customer', { type: 'another' })).toEqual([]);
      const first = await h().store.listTasks({ search: 'customer', limit: 1 });
      expect(first.tasks.map((t) => t.id)).toEqual([other.id]);
      const second = await h().store.listTasks({ search: 'customer', limit: 1, cursor: first.nextCursor });
      expect(second.tasks.map((t) => t.id)).toEqual([invoice.id]);
      expect(second.nextCursor).toBeNull();
    });

    it('counts tasks by type and status, and what finished since a time', async () => {
      const { store, clock } = h();
      await h().create({ type: 'a' });
      await h().create({ type: 'a' });
      const done = await h().running({ type: 'b' });
      clock.advance(2000);
      await store.completeTasks([writer(done)]);
      const failing = await h().running({ type: 'c', maxAttempts: 1 });
      clock.advance(500);
      await store.failTask({
        ...writer(failing),
        error: { code: 'x', message: 'x', retryable: true },
        backoff: BACKOFF,
      });
      const summary = await store.taskSummary({ since: T0, latencySample: 100 });
      expect(
        summary.byTypeAndStatus.sort((x, y) => x.type.localeCompare(y.type)).map((r) => ({ ...r })),
      ).toEqual([
        { type: 'a', status: 'created', count: 2 },
        { type: 'b', status: 'completed', count: 1 },
        { type: 'c', status: 'failed', count: 1 },
      ]);
      expect(summary.completedSince).toBe(1);
      expect(summary.failedSince).toBe(1);
      expect(summary.latenciesMs).toEqual([2000]);
      const later = await store.taskSummary({ since: T0 + 10_000, latencySample: 100 });
      expect([later.completedSince, later.failedSince, later.latenciesMs]).toEqual([0, 0, []]);
    });
  });
}
