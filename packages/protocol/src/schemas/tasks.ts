/**
 * Request schemas of the task routes (docs/protocol.md "Tasks", "Task writes by the holder"). The wire
 * types of these requests are inferred from them (`task.ts`), so the two cannot drift.
 */
import { z } from 'zod';
import { COORDINATOR_LOG_STREAM, TASK_STATUSES } from '../vocabulary.js';
import { durationMs, epochMs, json, jsonObject, labels, ms, name, taskId, version } from './common.js';

export const timingInput = z
  .object({
    heartbeatIntervalMs: durationMs(100)
      .optional()
      .describe('How often the agent sends heartbeats. Default 5000 (or the task type policy).'),
    timeoutFactor: z
      .number()
      .min(1)
      .max(100)
      .optional()
      .describe(
        'Missed heartbeats tolerated: heartbeatTimeoutMs = timeoutFactor × heartbeatIntervalMs. Default 3.',
      ),
    heartbeatTimeoutMs: durationMs(100)
      .optional()
      .describe('Explicit heartbeat timeout; must exceed heartbeatIntervalMs.'),
    claimTimeoutMs: durationMs(100)
      .optional()
      .describe('Claimed but not started for this long → timeout. Default 30000.'),
    executionTimeoutMs: durationMs(100)
      .optional()
      .describe("The agent's own limit for one attempt. Default none."),
    attemptDeadlineMs: durationMs(100)
      .optional()
      .describe("The coordinator's hard limit for one attempt. Default 1.5 × executionTimeoutMs."),
    stallTimeoutMs: durationMs(1000)
      .optional()
      .describe('Heartbeats arrive but progress is unchanged for this long → stalled. Default 300000.'),
    expectedDurationMs: z
      .object({ min: ms, max: durationMs(1) })
      .strict()
      .optional()
      .describe('Derive the timing from an expected duration (interval = clamp(min/10, 1 s, 60 s), ...).'),
  })
  .strict();

export const createTask = z
  .object({
    type: name,
    payload: json.optional(),
    idempotencyKey: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .describe('The same key and payload return the existing task instead of a new one.'),
    priority: z.number().int().min(-1000000).max(1000000).optional(),
    runAt: epochMs.optional().describe('Not claimable before this time.'),
    maxAttempts: z.number().int().min(1).max(1000).optional(),
    resumable: z.boolean().optional().describe('The next attempt receives the last checkpoint.'),
    requires: z
      .array(name)
      .max(32)
      .refine((deps) => new Set(deps).size === deps.length, { message: 'names a dependency twice' })
      .optional()
      .describe('Dependencies that must be up for it to be dispatched.'),
    timing: timingInput.optional(),
    labels: labels.optional(),
  })
  .strict();

export const createTasksBatch = z
  .object({
    tasks: z.array(createTask).min(1).max(10000),
    return: z
      .enum(['representation', 'minimal'])
      .optional()
      .describe(
        'representation (the default): every task in full. minimal: each created task as only what the coordinator decided (id, times; attempts and timing once per type), a task an idempotency key matched in full.',
      ),
  })
  .strict();

export const listTasksQuery = z
  .object({
    /** Comma-separated statuses. */
    status: z
      .string()
      .transform((s) => s.split(','))
      .pipe(z.array(z.enum(TASK_STATUSES, { message: `one of ${TASK_STATUSES.join(', ')}` })))
      .optional(),
    type: name.optional(),
    agentId: z.string().max(64).optional(),
    label: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .refine((v) => v === undefined || [v].flat().every((s) => /^[^:]+:.*$/.test(s)), {
        message: 'label must be key:value',
      }),
    /** Search: the id or idempotency key exactly, or a word of the payload or labels (any case). */
    q: z.string().min(1).max(200).optional(),
    limit: z.coerce.number().int().min(1).max(1000).optional(),
    cursor: z.string().max(256).optional(),
  })
  .strict();

export const startTask = z.object({ version }).strict();

export const taskHeartbeat = z
  .object({
    version,
    progress: z.number().min(0).max(1).optional(),
    phase: z.string().max(256).optional(),
    executionDone: z.boolean().optional(),
  })
  .strict();

export const checkpoint = z.object({ version, state: json.optional(), session: json.optional() }).strict();

/** An effect key (`ctx.once(key, fn)`): names a side effect that must happen once per task. */
export const effectKey = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9_.:@-]+$/, 'letters, digits and _ . : @ - only');

export const claimEffect = z
  .object({
    version,
    claimTtlMs: durationMs(1000)
      .optional()
      .describe(
        'How long this attempt may take to run the effect and record it; after that another attempt may run it. Default 600000.',
      ),
  })
  .strict();

export const recordEffect = z
  .object({
    claimId: z.string().min(1).max(64),
    result: json.optional().describe('What the effect returned (≤ 64 KiB); later attempts receive it.'),
    ttlMs: durationMs(60_000)
      .optional()
      .describe('How long the key and its result are kept. Default 604800000 (7 days).'),
  })
  .strict();

/** The effect key in a route's path. */
export const effectKeyPath = z.object({ key: effectKey });

export const releaseEffectQuery = z.object({ claimId: z.string().min(1).max(64) }).strict();

export const appendLogs = z
  .object({
    version,
    lines: z
      .array(
        z
          .object({
            stream: z
              .string()
              .min(1)
              .max(32)
              .refine((s) => s !== COORDINATOR_LOG_STREAM, {
                message: `"${COORDINATOR_LOG_STREAM}" is the coordinator's own log stream; use another name`,
              })
              .optional(),
            text: z.string().max(64 * 1024),
          })
          .strict(),
      )
      .min(1)
      .max(1000),
  })
  .strict();

export const completeTask = z.object({ version, result: json.optional() }).strict();

export const taskErrorInput = z
  .object({
    code: z.string().min(1).max(128),
    message: z.string().max(4096),
    retryable: z.boolean().optional().describe('false makes the failure final at once. Default true.'),
    details: jsonObject.optional(),
  })
  .strict();

export const failTask = z.object({ version, error: taskErrorInput }).strict();

export const cancelTask = z.object({ reason: z.string().max(1024).optional() }).strict();

export const versionQuery = z.object({ version: z.coerce.number().int().min(0) }).strict();

export const logsQuery = z.object({ after: z.coerce.number().int().min(0).optional() }).strict();

export { taskId };
