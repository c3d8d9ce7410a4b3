/** The PostgreSQL EffectStore (see `effect-store.ts`): each operation one conditional statement. */
import type { Json } from '@rouse/protocol';
import type { ClaimEffectInput, EffectClaim, EffectRecord, RecordEffectInput } from '../store.js';
import { effectClaimLapsed } from '../write-errors.js';
import { EFFECT_SQL } from './effect-statements.js';
import type { PgContext } from './postgres-context.js';
import { pgJson } from './row-mapping.js';

interface EffectRow {
  state: 'running' | 'done';
  claim_id: string;
  claim_expires_at: number;
  result: Json | null;
  done_at: number | null;
  expires_at: number;
}

async function selectEffect(
  ctx: PgContext,
  taskId: string,
  key: string,
): Promise<(EffectRow & { live: boolean }) | undefined> {
  const [row] = await ctx.rows<EffectRow & { live: boolean }>('selectEffect', EFFECT_SQL.selectEffect, [
    ctx.now(),
    taskId,
    key,
  ]);
  return row;
}

export async function claimEffect(ctx: PgContext, input: ClaimEffectInput): Promise<EffectClaim> {
  const [taken] = await ctx.rows<EffectRow>('claimEffect', EFFECT_SQL.claimEffect, [
    ctx.now(),
    input.taskId,
    input.key,
    input.claimId,
    input.agentId,
    input.claimTtlMs,
    Math.max(input.ttlMs, input.claimTtlMs),
  ]);
  if (taken !== undefined) {
    return { outcome: 'claimed', claimId: input.claimId, claimExpiresAt: taken.claim_expires_at };
  }
  // Not taken: another claim holds it, or it was recorded (a new statement sees what committed since).
  const row = await selectEffect(ctx, input.taskId, input.key);
  if (row === undefined) return claimEffect(ctx, input); // deleted in between: claim again
  if (row.state === 'done') return { outcome: 'done', result: row.result, doneAt: row.done_at ?? 0 };
  return { outcome: 'running', claimExpiresAt: row.claim_expires_at };
}

export async function recordEffect(ctx: PgContext, input: RecordEffectInput): Promise<EffectRecord> {
  const [recorded] = await ctx.rows<EffectRow>('recordEffect', EFFECT_SQL.recordEffect, [
    ctx.now(),
    input.taskId,
    input.key,
    input.claimId,
    pgJson(input.result),
    input.ttlMs,
  ]);
  if (recorded !== undefined) {
    return { outcome: 'recorded', result: recorded.result, doneAt: recorded.done_at ?? 0 };
  }
  const row = await selectEffect(ctx, input.taskId, input.key);
  if (row !== undefined && row.state === 'done' && row.live) {
    return { outcome: 'done', result: row.result, doneAt: row.done_at ?? 0 };
  }
  throw effectClaimLapsed(input.taskId, input.key);
}

export async function releaseEffect(
  ctx: PgContext,
  input: { taskId: string; key: string; claimId: string },
): Promise<boolean> {
  return (
    (await ctx.changes('releaseEffect', EFFECT_SQL.releaseEffect, [
      input.taskId,
      input.key,
      input.claimId,
    ])) === 1
  );
}

export async function deleteExpiredEffects(ctx: PgContext, input: { limit: number }): Promise<number> {
  return ctx.changes('deleteExpiredEffects', EFFECT_SQL.deleteExpiredEffects, [
    ctx.now(),
    Math.max(1, Math.floor(input.limit)),
  ]);
}
