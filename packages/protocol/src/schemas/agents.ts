/**
 * Request schemas of the agent routes (docs/protocol.md "Agents", "The watchdog"). The wire types of these
 * requests are inferred from them (`agent.ts`), so the two cannot drift.
 */
import { z } from 'zod';
import {
  BUDGET_KINDS,
  COMMAND_OUTCOMES,
  COMMAND_TYPES,
  DEPENDENCY_STATES,
  MAX_ACK_OUTPUT_CHARS,
  MAX_BUDGET_REPORTS,
  REPORTED_AGENT_STATUSES,
  SIGNAL_NAMES,
  SUPERVISED_STATES,
} from '../vocabulary.js';
import { durationMs, json, labels, ms, name, taskId, version } from './common.js';

/** An agent slot's key (`host-3/reviewer-2`): the same key and agent type → the same agent id. */
export const agentKey = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[A-Za-z0-9_.:/@-]+$/, 'letters, digits and _ . : / @ - only');

/** Free-form metadata of an agent heartbeat: a small flat-ish JSON object. */
export const MAX_METADATA_BYTES = 2048;
const utf8 = new TextEncoder();
const metadata = z
  .record(z.string().min(1).max(128), json)
  .refine((m) => utf8.encode(JSON.stringify(m)).length <= MAX_METADATA_BYTES, {
    message: `at most ${MAX_METADATA_BYTES} bytes as JSON (UTF-8)`,
  });

export const registerAgent = z
  .object({
    agentType: name.describe('Selects the watchdog policy.'),
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
    key: agentKey
      .optional()
      .describe(
        'Stable slot name: registering again with the same key and agentType returns the same agentId with incarnation + 1 (the previous incarnation is fenced off).',
      ),
    supervisorId: z.string().min(1).max(256).optional().describe('The supervisor that runs this process.'),
    requires: z.array(name).max(32).optional().describe('Dependencies this agent needs.'),
    exclusive: z
      .boolean()
      .optional()
      .describe(
        'With a key: refuse (409 agent_key_in_use) while the current incarnation of that key is active and its lease has not run out, instead of replacing it. A supervisor registers so: one live supervisor per name.',
      ),
  })
  .strict();

export const claim = z
  .object({
    types: z.array(name).min(1).max(64),
    max: z.number().int().min(1).max(1000).optional().describe('How many tasks at most. Default 1.'),
    waitMs: z
      .number()
      .int()
      .min(0)
      .max(60000)
      .optional()
      .describe('Long-poll: wait up to this long for work. Default 0.'),
    start: z
      .boolean()
      .optional()
      .describe('Move claimed tasks straight to running in the same write. Default false.'),
    complete: z
      .array(z.object({ taskId, version, result: json.optional() }).strict())
      .max(1000)
      .optional()
      .describe('Complete these held tasks before claiming (one request instead of two).'),
  })
  .strict();

/** The spend of a held task against one of its budget limits (`metrics.budgets`). */
export const taskBudget = z
  .object({
    taskId,
    kind: z.enum(BUDGET_KINDS).describe('What the limit counts.'),
    limit: z.number().positive().describe('The limit (tokens, USD, turns or ms).'),
    used: z.number().min(0).describe('What the task spent so far, in the same unit.'),
  })
  .strict();

export const metrics = z
  .object({
    rssBytes: z.number().min(0).optional(),
    cpuPercent: z.number().min(0).max(100000).optional(),
    loopLagMs: z.number().min(0).optional(),
    iterationMs: z.number().min(0).optional().describe('Duration of the last loop iteration (monitor mode).'),
    heartbeatFailures: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('Heartbeats this process could not send since it started (the SDK reports it).'),
    budgets: z
      .array(taskBudget)
      .max(MAX_BUDGET_REPORTS)
      .optional()
      .describe(
        'The spend of held tasks against their budget limits (an adapter reports its tightest limit per task). used > limit opens resource_runaway for that task.',
      ),
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
    taskId,
    version,
    progress: z.number().min(0).max(1).optional(),
    phase: z.string().max(256).optional(),
    executionDone: z.boolean().optional(),
  })
  .strict();

export const commandAck = z
  .object({
    commandId: z.string().min(1).max(64),
    outcome: z.enum(COMMAND_OUTCOMES),
    message: z.string().max(1024).optional().describe('What happened (why it failed, say).'),
    output: z
      .string()
      .max(MAX_ACK_OUTPUT_CHARS)
      .optional()
      .describe(
        "The last lines the process wrote (a supervisor's ack of a terminate or restart): kept with the intervention's evidence.",
      ),
  })
  .strict();

/** A signal name a supervisor sends to a process group (`SIGUSR1`, `SIGTERM`, …). */
export const signalName = z.enum(SIGNAL_NAMES);

/** What a supervisor says of one of its children (a program instance) in its heartbeat. */
export const supervisedChild = z
  .object({
    agentKey: agentKey.describe("The child's slot key: <supervisor name>/<program>-<instance>."),
    agentId: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe('The agent id of a child the supervisor registered itself (a plain process).'),
    incarnation: z.number().int().min(1).optional().describe('With agentId: the incarnation it registered.'),
    program: name,
    instance: z.number().int().min(1).max(100000),
    plain: z
      .boolean()
      .describe(
        'A process that does not use the SDK: this entry is its heartbeat (alive = running). False: the child heartbeats itself, and this entry is evidence only.',
      ),
    pid: z
      .number()
      .int()
      .min(0)
      .max(2 ** 31)
      .nullable(),
    state: z.enum(SUPERVISED_STATES),
    restarts: z.number().int().min(0),
    rssBytes: z.number().min(0).optional(),
    cpuPercent: z.number().min(0).max(100000).optional(),
    outputAt: z.number().int().min(0).nullable().describe('When it last wrote output (epoch ms).'),
    progress: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .describe("From the program's output regex (done/total), for a plain process."),
    phase: z.string().max(256).optional(),
    lastExit: z
      .object({
        code: z.number().int().nullable(),
        signal: z.string().max(16).nullable(),
        at: z.number().int().min(0),
      })
      .strict()
      .nullable()
      .optional(),
  })
  .strict();

/** A child that used up its restart budget, reported once (re-sent until a heartbeat gets through). */
export const fatalReport = z
  .object({
    agentKey,
    agentId: z.string().min(1).max(64).optional(),
    program: name,
    instance: z.number().int().min(1).max(100000),
    restarts: z.number().int().min(0),
    at: z.number().int().min(0),
    lastExit: z
      .object({ code: z.number().int().nullable(), signal: z.string().max(16).nullable() })
      .strict()
      .nullable(),
    output: z.string().max(MAX_ACK_OUTPUT_CHARS).optional().describe('Its last output lines.'),
  })
  .strict();

export const agentHeartbeat = z
  .object({
    status: z
      .enum(REPORTED_AGENT_STATUSES)
      .optional()
      .describe('What the agent knows of itself; lost, stalled, at_risk, terminated and left are derived.'),
    statusMessage: z.string().max(1024).optional().describe('Why: the last error, with status error.'),
    progress: z.number().min(0).max(1).optional(),
    phase: z.string().max(256).optional(),
    metrics: metrics.optional(),
    metadata: metadata.optional().describe("Free-form; the policy's progress_field is read from it."),
    dependencies: z.array(dependencyReport).max(32).optional(),
    tasks: z.array(taskBeat).max(1000).optional(),
    acks: z
      .array(commandAck)
      .max(100)
      .optional()
      .describe('Answers to commands delivered on earlier heartbeat responses, by their id.'),
    children: z
      .array(supervisedChild)
      .max(1000)
      .optional()
      .describe("A supervisor's children (rouse supervise): one heartbeat per host."),
    fatal: z
      .array(fatalReport)
      .max(100)
      .optional()
      .describe('Children that went fatal (restart budget spent) since the last heartbeat that got through.'),
  })
  .strict();

export const agentCommand = z
  .object({
    type: z.enum(COMMAND_TYPES),
    taskId: z.string().max(64).optional(),
    reason: z.string().max(1024).optional(),
    signal: signalName
      .optional()
      .describe(
        "wake: the signal the agent's supervisor also sends its process group (else the program's wake_signal); the agent itself still gets the wake.",
      ),
    graceMs: ms
      .optional()
      .describe('terminate/restart: how long the process gets to exit after the stop signal before SIGKILL.'),
    ttlMs: durationMs(1000)
      .optional()
      .describe('checkpoint: keep the snapshot it asks for this long (else the agent’s own TTL).'),
  })
  .strict();

/** `POST /v1/agents/{id}/commands/acks`: answers to commands taken, sent at once rather than with a heartbeat. */
export const commandAcks = z
  .object({
    acks: z
      .array(commandAck)
      .min(1)
      .max(100)
      .describe('Answers to commands delivered by commands/next or on heartbeat responses, by their id.'),
  })
  .strict();

/** `POST /v1/agents/{id}/commands/next`: take the agent's commands, waiting for one up to `waitMs`. */
export const nextCommands = z
  .object({
    waitMs: z
      .number()
      .int()
      .min(0)
      .max(60000)
      .optional()
      .describe('Long-poll: wait up to this long for a command. Default 0.'),
  })
  .strict();

export const dependencyReportBody = dependencyReport.omit({ name: true });
