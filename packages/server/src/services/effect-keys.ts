/**
 * Effect keys (docs/design.md "Effect keys"; `ctx.once(key, fn)` in the SDK): the holder of a running
 * task claims a key before a side effect that must happen once, records what the effect returned, or
 * gives the claim back when the effect failed. The claim is the guard — of any number of attempts,
 * one runs the effect and the others receive its result — so the holder check before it is plain
 * hygiene (a stale attempt is told to stop before it starts an effect). Recording and releasing need
 * the claim's id, which only the claimer was given. Expired keys are deleted in the background.
 */
import { randomBytes } from 'node:crypto';
import {
  type ClaimEffectRequest,
  type EffectClaimResponse,
  type EffectRecordResponse,
  MAX_INLINE_RESULT_BYTES,
  type RecordEffectRequest,
} from '@rouse/protocol';
import { NotFoundError, RouseError, StaleVersionError } from '../core/errors.js';
import { requireTaskWriter } from './auth.js';
import type { Caller } from './coordinator.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { every } from './periodic.js';

/** How long a claim holds the key unless recorded (the claiming attempt may ask for another). */
export const DEFAULT_EFFECT_CLAIM_TTL_MS = 10 * 60 * 1000;
/** How long a key and its result are kept (the asking attempt may ask for another). */
export const DEFAULT_EFFECT_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export async function claimEffect(
  ctx: CoordinatorContext,
  caller: Caller,
  taskId: string,
  key: string,
  req: ClaimEffectRequest,
): Promise<EffectClaimResponse> {
  const callerAgent = requireTaskWriter(caller, 'claim effect keys');
  const task = await ctx.store.getTask(taskId);
  if (task === null) throw new NotFoundError('task', taskId);
  if (task.version !== req.version || task.status !== 'running') {
    throw new StaleVersionError(taskId, req.version, task.version, task.status);
  }
  if (callerAgent !== null && task.agentId !== callerAgent) {
    throw new RouseError('forbidden', `agent ${callerAgent} does not hold task ${taskId}`, {
      taskId,
      agentId: callerAgent,
    });
  }
  return ctx.store.claimEffect({
    taskId,
    key,
    claimId: `clm_${randomBytes(16).toString('hex')}`,
    agentId: task.agentId ?? 'admin',
    claimTtlMs: req.claimTtlMs ?? DEFAULT_EFFECT_CLAIM_TTL_MS,
    ttlMs: DEFAULT_EFFECT_TTL_MS,
  });
}

export async function recordEffect(
  ctx: CoordinatorContext,
  caller: Caller,
  taskId: string,
  key: string,
  req: RecordEffectRequest,
): Promise<EffectRecordResponse> {
  requireTaskWriter(caller, 'record effects');
  const result = req.result ?? null;
  const bytes = Buffer.byteLength(JSON.stringify(result));
  if (bytes > MAX_INLINE_RESULT_BYTES) {
    throw new RouseError(
      'payload_too_large',
      `the result of effect ${key} is ${bytes} bytes, over the ${MAX_INLINE_RESULT_BYTES}-byte limit; record a reference to it instead`,
      { taskId, key, limitBytes: MAX_INLINE_RESULT_BYTES, sizeBytes: bytes },
    );
  }
  return ctx.store.recordEffect({
    taskId,
    key,
    claimId: req.claimId,
    result,
    ttlMs: req.ttlMs ?? DEFAULT_EFFECT_TTL_MS,
  });
}

export async function releaseEffect(
  ctx: CoordinatorContext,
  caller: Caller,
  taskId: string,
  key: string,
  claimId: string,
): Promise<{ released: boolean }> {
  requireTaskWriter(caller, 'release effect keys');
  return { released: await ctx.store.releaseEffect({ taskId, key, claimId }) };
}

/** Deleted per statement by the sweep (it repeats until fewer are left). */
const SWEEP_BATCH = 1000;

export interface EffectSweeper {
  start(): void;
  stop(): void;
  /** Delete every expired key now (also what the timer runs); returns how many. */
  sweep(): Promise<number>;
}

/** Every `intervalMs`, delete the effect keys whose time is up (any coordinator may; deletes are conditional). */
export function createEffectSweeper(deps: {
  store: Pick<CoordinatorContext['store'], 'deleteExpiredEffects'>;
  clock: CoordinatorContext['clock'];
  logger: CoordinatorContext['logger'];
  intervalMs: number;
}): EffectSweeper {
  const { store, clock, logger, intervalMs } = deps;

  const sweep = async (): Promise<number> => {
    let total = 0;
    for (;;) {
      const n = await store.deleteExpiredEffects({ limit: SWEEP_BATCH });
      total += n;
      if (n < SWEEP_BATCH) break;
    }
    if (total > 0) logger.info({ deleted: total }, 'deleted expired effect keys');
    return total;
  };
  const loop = every(clock, intervalMs, sweep, (err) =>
    logger.warn({ err }, 'effect key sweep failed; trying again next time'),
  );
  return { start: () => loop.start(), stop: () => loop.stop(), sweep };
}
