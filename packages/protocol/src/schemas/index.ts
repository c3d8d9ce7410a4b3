/**
 * Zod schemas for every request body of protocol v1. The server validates at the edge with these
 * and publishes them as OpenAPI (`z.toJSONSchema`). Limits here are part of the contract.
 */
import { z } from 'zod';
import { AGENT_STATUSES, COMMAND_TYPES, DEPENDENCY_STATES } from '../agent.js';
import { TASK_STATUSES } from '../task.js';

/** Names: task types, agent types, dependency names, error codes. */
export const name = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_.:/-]+$/, 'letters, digits and _ . : / - only');

const json: z.ZodType<unknown> = z.json();
const labels = z
  .record(z.string().min(1).max(128), z.string().max(512))
  .refine((l) => Object.keys(l).length <= 64, {
    message: 'at most 64 labels',
  });
const ms = z
  .number()
  .int()
  .min(0)
  .max(365 * 24 * 3600 * 1000);
const positiveMs = z
  .number()
  .int()
  .min(1)
  .max(365 * 24 * 3600 * 1000);
const epochMs = z.number().int().min(0).max(8.64e15);
const version = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export const timingInput = z
  .object({
    heartbeatIntervalMs: positiveMs.min(100).optional(),
    timeoutFactor: z.number().min(1).max(100).optional(),
    heartbeatTimeoutMs: positiveMs.min(100).optional(),
    claimTimeoutMs: positiveMs.min(100).optional(),
    executionTimeoutMs: positiveMs.min(100).optional(),
    attemptDeadlineMs: positiveMs.min(100).optional(),
    stallTimeoutMs: positiveMs.min(1000).optional(),
    expectedDurationMs: z.object({ min: ms, max: positiveMs }).strict().optional(),
  })
  .strict();

export const createTask = z
  .object({
    type: name,
    payload: json.optional(),
    idempotencyKey: z.string().min(1).max(256).optional(),
    priority: z.number().int().min(-1000000).max(1000000).optional(),
    runAt: epochMs.optional(),
    maxAttempts: z.number().int().min(1).max(1000).optional(),
    resumable: z.boolean().optional(),
    requires: z.array(name).max(32).optional(),
    timing: timingInput.optional(),
    labels: labels.optional(),
  })
  .strict();

export const createTasksBatch = z.object({ tasks: z.array(createTask).min(1).max(10000) }).strict();

export const listTasksQuery = z
  .object({
    status: z
      .string()
      .optional()
      .refine(
        (s) => s === undefined || s.split(',').every((x) => (TASK_STATUSES as readonly string[]).includes(x)),
        {
          message: `comma-separated list of ${TASK_STATUSES.join(', ')}`,
        },
      ),
    type: name.optional(),
    agentId: z.string().max(64).optional(),
    label: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .refine((v) => v === undefined || [v].flat().every((s) => /^[^:]+:.*$/.test(s)), {
        message: 'label must be key:value',
      }),
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

export const appendLogs = z
  .object({
    version,
    lines: z
      .array(
        z.object({ stream: z.string().min(1).max(32).optional(), text: z.string().max(64 * 1024) }).strict(),
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
    retryable: z.boolean().optional(),
    details: z.record(z.string(), json).optional(),
  })
  .strict();

export const failTask = z.object({ version, error: taskErrorInput }).strict();

export const cancelTask = z.object({ reason: z.string().max(1024).optional() }).strict();

export const versionQuery = z.object({ version: z.coerce.number().int().min(0) }).strict();

export const logsQuery = z.object({ after: z.coerce.number().int().min(0).optional() }).strict();

export const registerAgent = z
  .object({
    agentType: name,
    name: z.string().min(1).max(256).optional(),
    host: z.string().min(1).max(256).optional(),
    pid: z
      .number()
      .int()
      .min(0)
      .max(2 ** 31)
      .optional(),
    taskTypes: z.array(name).max(64).optional(),
    labels: labels.optional(),
  })
  .strict();

export const claim = z
  .object({
    types: z.array(name).min(1).max(64),
    max: z.number().int().min(1).max(1000).optional(),
    waitMs: z.number().int().min(0).max(60000).optional(),
    start: z.boolean().optional(),
    complete: z
      .array(z.object({ taskId: z.string().min(1).max(64), version, result: json.optional() }).strict())
      .max(1000)
      .optional(),
  })
  .strict();

export const metrics = z
  .object({
    rssBytes: z.number().min(0).optional(),
    cpuPercent: z.number().min(0).max(100000).optional(),
    loopLagMs: z.number().min(0).optional(),
    iterationMs: z.number().min(0).optional(),
  })
  .strict();

export const dependencyReport = z
  .object({
    name,
    state: z.enum(DEPENDENCY_STATES),
    retryAfterMs: ms.optional(),
    message: z.string().max(1024).optional(),
  })
  .strict();

export const taskBeat = z
  .object({
    taskId: z.string().min(1).max(64),
    version,
    progress: z.number().min(0).max(1).optional(),
    phase: z.string().max(256).optional(),
    executionDone: z.boolean().optional(),
  })
  .strict();

export const agentHeartbeat = z
  .object({
    status: z.enum(AGENT_STATUSES).optional(),
    progress: z.number().min(0).max(1).optional(),
    metrics: metrics.optional(),
    dependencies: z.array(dependencyReport).max(32).optional(),
    tasks: z.array(taskBeat).max(1000).optional(),
  })
  .strict();

export const agentCommand = z
  .object({
    type: z.enum(COMMAND_TYPES),
    taskId: z.string().max(64).optional(),
    reason: z.string().max(1024).optional(),
  })
  .strict();

export const dependencyReportBody = dependencyReport.omit({ name: true });

export type CreateTaskInput = z.infer<typeof createTask>;
export type ClaimInput = z.infer<typeof claim>;
export type AgentHeartbeatInput = z.infer<typeof agentHeartbeat>;
