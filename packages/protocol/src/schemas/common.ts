/**
 * Building blocks shared by the request schemas: names, free-form JSON, labels, durations and times.
 * Limits here are part of the contract.
 */
import { z } from 'zod';
import type { Json, JsonObject } from '../json.js';

/** Names: task types, agent types, dependency names, error codes. */
export const name = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_.:/-]+$/, 'letters, digits and _ . : / - only');

/** Deeper than this, a value is refused (HTTP bodies are already held to 64 levels before parsing). */
const MAX_JSON_DEPTH = 100;

/**
 * True when `value` is what `JSON.parse` can return: null, booleans, finite numbers, strings, and
 * arrays and plain objects of those, nested at most 100 levels (which also ends the walk on a cycle).
 */
export function isJsonValue(value: unknown, depth = 0): value is Json {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null) return true;
      if (depth >= MAX_JSON_DEPTH) return false;
      if (Array.isArray(value)) {
        // A hole reads as undefined, which is not JSON.
        for (let i = 0; i < value.length; i++) if (!isJsonValue(value[i], depth + 1)) return false;
        return true;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return false;
      for (const key in value) {
        if (!isJsonValue((value as Record<string, unknown>)[key], depth + 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/**
 * Any JSON value (free-form fields: payloads, checkpoints, results, details), kept as given.
 *
 * One walk that copies nothing: zod's `z.json()` rebuilds every nested object and array through a
 * union of six schemas, and in batches of task creates that was a third of what the coordinator
 * allocated. In JSON Schema this is `{}`, which on a JSON wire is the same thing.
 */
export const json: z.ZodType<Json, Json> = z
  .custom<Json>((v) => isJsonValue(v), { message: 'must be a JSON value' })
  .meta({ description: 'Any JSON value.' });
/** A JSON object of free-form values. */
export const jsonObject: z.ZodType<JsonObject, JsonObject> = z.record(z.string(), json);

export const labels = z
  .record(z.string().min(1).max(128), z.string().max(512))
  .refine((l) => Object.keys(l).length <= 64, {
    message: 'at most 64 labels',
  });

const YEAR_MS = 365 * 24 * 3600 * 1000;
/** A duration in milliseconds, 0 allowed. */
export const ms = z.number().int().min(0).max(YEAR_MS);
/** A duration in milliseconds of at least `min` (a smaller value is certainly a mistake). */
export const durationMs = (min: number) => z.number().int().min(min).max(YEAR_MS);
/** A time as epoch milliseconds. */
export const epochMs = z.number().int().min(0).max(8.64e15);
/** The fencing token every holder write carries. */
export const version = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** A task id as it appears in bodies. */
export const taskId = z.string().min(1).max(64);
