/**
 * A monitored agent's `metadata`: a small JSON object sent with every heartbeat (at most 2048
 * characters as JSON, the protocol's limit), where the policy's `progress_field` is read. Patches are
 * merged at the top level; a key set to `undefined` is removed.
 */
import type { Json, JsonObject } from '@rouse/protocol';
import { InvalidOptionError } from '../errors.js';

/** The protocol's limit on a heartbeat's metadata, as JSON. */
export const MAX_METADATA_BYTES = 2048;

/** `patch` merged into `current` (a new object); `undefined` values remove their key. */
export function mergeMetadata(current: JsonObject, patch: Record<string, Json | undefined>): JsonObject {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) {
    throw new InvalidOptionError('metadata(patch)', 'must be a plain object of JSON values', patch);
  }
  const next: JsonObject = { ...current };
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) delete next[k];
    else next[k] = v;
  }
  return next;
}

/**
 * `m` as JSON (a copy: later changes to the caller's objects cannot make a heartbeat fail); throws when
 * it breaks the protocol's rules (JSON, keys of 1-128 characters, ≤ 2048 characters of JSON).
 */
export function checkMetadata(m: JsonObject, option: string): JsonObject {
  for (const k of Object.keys(m)) {
    if (k.length < 1 || k.length > 128)
      throw new InvalidOptionError(option, 'keys must be 1-128 characters', k);
  }
  let text: string;
  try {
    text = JSON.stringify(m);
  } catch (err) {
    throw new InvalidOptionError(option, `must be JSON (${(err as Error).message})`);
  }
  if (text.length > MAX_METADATA_BYTES) {
    throw new InvalidOptionError(
      option,
      `must stay within ${MAX_METADATA_BYTES} characters as JSON (it would be ${text.length})`,
    );
  }
  return JSON.parse(text) as JsonObject;
}
