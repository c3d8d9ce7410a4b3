/**
 * The effect-keys part of the Store contract (docs/design.md "Effect keys"): a side effect inside a
 * task that must happen once whatever happens to its attempts (an email, a payment) is named by a key
 * of that task. The first attempt to claim the key runs the effect and records what it returned;
 * every later claim — another attempt, another process, another host — gets that result instead. A
 * claim that is never recorded (its process died mid-effect) lapses after its `claimTtlMs`, and the
 * key may then be claimed again. Keys are kept `ttlMs` and then deleted. Part of `Store` (`store.ts`).
 */
import type { Json } from '@rouse/protocol';

export interface ClaimEffectInput {
  taskId: string;
  key: string;
  /** A fresh random id naming this claim; recording and releasing need it. */
  claimId: string;
  /** The agent whose attempt claims (for the record). */
  agentId: string;
  /** The claim lapses this long after it is taken unless recorded. */
  claimTtlMs: number;
  /** The key (and, once recorded, its result) is kept this long. */
  ttlMs: number;
}

/**
 * `claimed`: run the effect now, then record it; `done`: it ran, here is its result; `running`:
 * another live claim holds it until `claimExpiresAt`.
 */
export type EffectClaim =
  | { outcome: 'claimed'; claimId: string; claimExpiresAt: number }
  | { outcome: 'done'; result: Json | null; doneAt: number }
  | { outcome: 'running'; claimExpiresAt: number };

export interface RecordEffectInput {
  taskId: string;
  key: string;
  claimId: string;
  result: Json | null;
  /** Kept this long from now. */
  ttlMs: number;
}

/** `recorded`: this result is the key's; `done`: the key was recorded before (its result is returned). */
export interface EffectRecord {
  outcome: 'recorded' | 'done';
  result: Json | null;
  doneAt: number;
}

export interface EffectStore {
  /**
   * Claim `key` of the task for one attempt: atomic, so of two attempts claiming at once exactly one
   * gets `claimed`. A key whose claim lapsed (not recorded within its `claimTtlMs`) or whose `ttlMs`
   * passed is claimed anew.
   */
  claimEffect(input: ClaimEffectInput): Promise<EffectClaim>;
  /**
   * Record what the effect returned, under the claim that ran it. A key recorded already answers
   * `done` with the first result (nothing changes). Throws `conflict` when the claim is no longer the
   * key's (it lapsed and was taken by another attempt, released, or expired) and nothing is recorded.
   */
  recordEffect(input: RecordEffectInput): Promise<EffectRecord>;
  /** Give a claim back (the effect failed): the key is free again. False when that claim is not the key's. */
  releaseEffect(input: { taskId: string; key: string; claimId: string }): Promise<boolean>;
  /** Delete up to `limit` keys whose `ttlMs` passed; returns how many. */
  deleteExpiredEffects(input: { limit: number }): Promise<number>;
}
