/** The PostgreSQL SessionStore (see `session-store.ts`): each operation one statement. */
import type { DashboardSession, SaveSessionInput, SessionRole } from '../store.js';
import type { PgContext } from './postgres-context.js';
import { SESSION_SQL } from './session-statements.js';

export async function saveSession(ctx: PgContext, input: SaveSessionInput): Promise<void> {
  await ctx.changes('saveSession', SESSION_SQL.saveSession, [
    ctx.now(),
    input.key,
    input.kind,
    input.role,
    input.csrfToken,
    input.ttlMs,
  ]);
}

export async function touchSession(
  ctx: PgContext,
  input: { key: string; idleMs: number },
): Promise<DashboardSession | null> {
  const [row] = await ctx.rows<{
    role: SessionRole;
    csrf_token: string;
    created_at: number;
    expires_at: number;
  }>('touchSession', SESSION_SQL.touchSession, [ctx.now(), input.key, input.idleMs]);
  if (row === undefined) return null;
  return {
    role: row.role,
    csrfToken: row.csrf_token,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

export async function takeLoginCode(ctx: PgContext, key: string): Promise<{ role: SessionRole } | null> {
  const [row] = await ctx.rows<{ role: SessionRole }>('takeLoginCode', SESSION_SQL.takeLoginCode, [
    ctx.now(),
    key,
  ]);
  return row === undefined ? null : { role: row.role };
}

export async function deleteSession(ctx: PgContext, key: string): Promise<boolean> {
  return (await ctx.changes('deleteSession', SESSION_SQL.deleteSession, [key])) === 1;
}

export async function deleteExpiredSessions(ctx: PgContext, input: { limit: number }): Promise<number> {
  return ctx.changes('deleteExpiredSessions', SESSION_SQL.deleteExpiredSessions, [
    ctx.now(),
    Math.max(1, Math.floor(input.limit)),
  ]);
}
