/** The SQLite EffectStore: effect keys claimed, recorded, released and expired (see `effect-store.ts`). */
import type { Json } from '@rouse/protocol';
import type { ClaimEffectInput, EffectClaim, EffectRecord, RecordEffectInput } from '../store.js';
import { effectClaimLapsed } from '../write-errors.js';
import type { SqliteContext } from './sqlite-context.js';

interface EffectRow {
  state: 'running' | 'done';
  claim_id: string;
  claim_expires_at: number;
  result: string | null;
  done_at: number | null;
  expires_at: number;
}

const parse = (text: string | null): Json | null => (text === null ? null : (JSON.parse(text) as Json));

function selectEffect(ctx: SqliteContext, taskId: string, key: string): EffectRow | undefined {
  return ctx.effects.selectEffect.get({ taskId, key }) as EffectRow | undefined;
}

export function claimEffect(ctx: SqliteContext, input: ClaimEffectInput): EffectClaim {
  const now = ctx.clock.now();
  const claimExpiresAt = now + input.claimTtlMs;
  ctx.effects.claimEffect.run({
    taskId: input.taskId,
    key: input.key,
    claimId: input.claimId,
    agentId: input.agentId,
    now,
    claimExpiresAt,
    expiresAt: now + Math.max(input.ttlMs, input.claimTtlMs),
  });
  const row = selectEffect(ctx, input.taskId, input.key);
  if (row === undefined) throw new Error(`effect key ${input.key} vanished inside its claim`);
  if (row.claim_id === input.claimId && row.state === 'running') {
    return { outcome: 'claimed', claimId: input.claimId, claimExpiresAt: row.claim_expires_at };
  }
  if (row.state === 'done') return { outcome: 'done', result: parse(row.result), doneAt: row.done_at ?? now };
  return { outcome: 'running', claimExpiresAt: row.claim_expires_at };
}

export function recordEffect(ctx: SqliteContext, input: RecordEffectInput): EffectRecord {
  const now = ctx.clock.now();
  const { changes } = ctx.effects.recordEffect.run({
    taskId: input.taskId,
    key: input.key,
    claimId: input.claimId,
    result: JSON.stringify(input.result),
    now,
    expiresAt: now + input.ttlMs,
  });
  if (changes === 1) return { outcome: 'recorded', result: input.result, doneAt: now };
  const row = selectEffect(ctx, input.taskId, input.key);
  if (row !== undefined && row.state === 'done' && row.expires_at > now) {
    return { outcome: 'done', result: parse(row.result), doneAt: row.done_at ?? now };
  }
  throw effectClaimLapsed(input.taskId, input.key);
}

export function releaseEffect(
  ctx: SqliteContext,
  input: { taskId: string; key: string; claimId: string },
): boolean {
  return ctx.effects.releaseEffect.run(input).changes === 1;
}

export function deleteExpiredEffects(ctx: SqliteContext, input: { limit: number }): number {
  return ctx.effects.deleteExpiredEffects.run({
    now: ctx.clock.now(),
    limit: Math.max(1, Math.floor(input.limit)),
  }).changes;
}
