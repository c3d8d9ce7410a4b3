/**
 * Building blocks shared by the request schemas: names, free-form JSON, labels, durations and times.
 * Limits here are part of the contract.
 */
import { z } from 'zod';
import type { Json, JsonObject } from '../task.js';

/** Names: task types, agent types, dependency names, error codes. */
export const name = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_.:/-]+$/, 'letters, digits and _ . : / - only');

/** Any JSON value (free-form fields: payloads, checkpoints, results, details). */
export const json: z.ZodType<Json, Json> = z.json();
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
