/**
 * Time-sortable ids (ULID-like): `<prefix>_` + 10 Crockford base32 characters of the creation time
 * (ms, from the injected clock) + 16 of randomness. Ids made in the same millisecond increase
 * monotonically, so sorting by id sorts by creation.
 */
import { randomFillSync } from 'node:crypto';

export type IdPrefix = 'tsk' | 'agt' | 'itv' | 'alr';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;
const POOL_BYTES = 4096;

const pool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;
let lastTimeMs = -1;
const lastRandom: number[] = new Array<number>(RANDOM_CHARS).fill(0);

/** A new id for `prefix` at `nowMs` (use the coordinator's clock). */
export function newId(prefix: IdPrefix, nowMs: number): string {
  if (nowMs > lastTimeMs) {
    lastTimeMs = nowMs;
    freshRandom();
  } else if (!increment()) {
    // 80 random bits overflowed within one ms (practically never): move to the next ms.
    lastTimeMs += 1;
    freshRandom();
  }
  let time = '';
  let t = Math.max(0, Math.floor(lastTimeMs));
  for (let i = 0; i < TIME_CHARS; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  let rand = '';
  for (const v of lastRandom) rand += ALPHABET[v];
  return `${prefix}_${time}${rand}`;
}

function freshRandom(): void {
  if (poolOffset + RANDOM_CHARS > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  for (let i = 0; i < RANDOM_CHARS; i++) lastRandom[i] = pool[poolOffset + i]! & 31;
  // Leave headroom so increments within one ms practically never overflow.
  lastRandom[0] = lastRandom[0]! & 15;
  poolOffset += RANDOM_CHARS;
}

function increment(): boolean {
  for (let i = RANDOM_CHARS - 1; i >= 0; i--) {
    if (lastRandom[i]! < 31) {
      lastRandom[i]! += 1;
      return true;
    }
    lastRandom[i] = 0;
  }
  return false;
}
