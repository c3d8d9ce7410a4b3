/**
 * JSON Merge Patch (RFC 7386), the format of `PATCH /v1/agents/{id}/snapshot`
 * (`application/merge-patch+json`): a patch object names the members to change; `null` removes a
 * member, an object merges into the member recursively, any other value (arrays included) replaces it.
 * A patch that is not an object replaces the whole target. Pure functions shared by the coordinator
 * (which composes a snapshot's base with its deltas) and the SDK (which sends the difference between
 * two states instead of the whole state).
 */
import type { Json, JsonObject } from './task.js';

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Defined, not assigned: a member named "__proto__" stays a member instead of the prototype. */
function setMember(object: JsonObject, name: string, value: Json): void {
  Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * The target with `patch` applied (RFC 7386 §2). Never changes its arguments; the result may share
 * unchanged parts with them.
 */
export function applyMergePatch(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return patch;
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) delete out[name];
    else {
      setMember(out, name, applyMergePatch(Object.hasOwn(out, name) ? out[name] : undefined, value));
    }
  }
  return out;
}

/** `base` with every patch of `patches` applied in order. */
export function composeMergePatches(base: Json, patches: readonly Json[]): Json {
  let state = base;
  for (const patch of patches) state = applyMergePatch(state, patch);
  return state;
}

/**
 * A merge patch that turns the object `from` into the object `to` (`{}` when they are equal), or
 * null when none exists: a merge patch cannot set a member to `null` (null means "remove"), so a
 * `to` holding a `null` member inside an object cannot be reached — send `to` whole instead.
 */
export function mergePatchBetween(from: JsonObject, to: JsonObject): JsonObject | null {
  const patch: JsonObject = {};
  for (const name of Object.keys(from)) {
    if (!Object.hasOwn(to, name)) setMember(patch, name, null);
  }
  for (const [name, value] of Object.entries(to)) {
    if (value === null) return null;
    const before = Object.hasOwn(from, name) ? from[name] : undefined;
    if (isObject(value)) {
      if (isObject(before)) {
        const inner = mergePatchBetween(before, value);
        if (inner === null) return null;
        if (Object.keys(inner).length > 0) setMember(patch, name, inner);
      } else {
        // a fresh object: every member of it must be reachable too
        const whole = mergePatchBetween({}, value);
        if (whole === null) return null;
        setMember(patch, name, value);
      }
    } else if (!Object.hasOwn(from, name) || !jsonEqual(before, value)) {
      setMember(patch, name, value);
    }
  }
  return patch;
}

/** Deep equality of two JSON values (object member order does not matter). */
export function jsonEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => jsonEqual(v, b[i]));
  }
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
}
