/** The SQLite SessionStore: dashboard login codes and sessions (see `session-store.ts`). */
import type { DashboardSession, SaveSessionInput, SessionRole } from '../store.js';
import type { SqliteContext } from './sqlite-context.js';

export function saveSession(ctx: SqliteContext, input: SaveSessionInput): void {
  const now = ctx.clock.now();
  ctx.sessions.saveSession.run({
    key: input.key,
    kind: input.kind,
    role: input.role,
    csrfToken: input.csrfToken,
    now,
    expiresAt: now + input.ttlMs,
  });
}

export function touchSession(
  ctx: SqliteContext,
  input: { key: string; idleMs: number },
): DashboardSession | null {
  const now = ctx.clock.now();
  const row = ctx.sessions.touchSession.get({ key: input.key, now, expiresAt: now + input.idleMs }) as
    | { role: SessionRole; csrf_token: string; created_at: number; expires_at: number }
    | undefined;
  if (row === undefined) return null;
  return { role: row.role, csrfToken: row.csrf_token, createdAt: row.created_at, expiresAt: row.expires_at };
}

export function takeLoginCode(ctx: SqliteContext, key: string): { role: SessionRole } | null {
  const row = ctx.sessions.takeLoginCode.get({ key, now: ctx.clock.now() }) as
    | { role: SessionRole }
    | undefined;
  return row === undefined ? null : { role: row.role };
}

export function deleteSession(ctx: SqliteContext, key: string): boolean {
  return ctx.sessions.deleteSession.run({ key }).changes === 1;
}

export function deleteExpiredSessions(ctx: SqliteContext, input: { limit: number }): number {
  return ctx.sessions.deleteExpiredSessions.run({
    now: ctx.clock.now(),
    limit: Math.max(1, Math.floor(input.limit)),
  }).changes;
}
