/**
 * Canonical JSON (object keys sorted at every depth), so that two payloads that differ only in key
 * order compare equal for idempotent creates on every backend.
 */
import type { Json } from '@rouse/protocol';

export function canonicalJson(value: Json | undefined): string {
  return JSON.stringify(sortKeys(value ?? null));
}

function sortKeys(value: Json): Json {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: { [key: string]: Json } = {};
  for (const key of Object.keys(value).sort()) {
    const v = value[key];
    if (v !== undefined) out[key] = sortKeys(v);
  }
  return out;
}
