/**
 * The policy file's schema (docs/design.md §6.3, §6.7), in the file's own words: snake_case keys,
 * durations and sizes with units (`@rouse/protocol`'s `units.ts`), strict objects (an unknown key is an error). Parsing
 * gives the file's values in ms and bytes, with absent fields left undefined: defaults, and values
 * derived from other fields, are filled in by `resolved-policy.ts`, `task-type-defaults.ts` and
 * `alert-settings.ts`, where they are documented.
 *
 * Checks that involve several fields of one object live here (`min_timeout` against the timeout,
 * `expected_duration.min` ≤ `max`); checks across the file (unique names, channels named by alert
 * rungs) live in `policy-file-checks.ts`.
 */
import {
  ALERT_SEVERITIES,
  CONDITION_KINDS,
  formatDuration,
  INTERVENTION_ACTIONS,
  parseDuration,
  parseSize,
  SIGNAL_NAMES,
  type SignalName,
} from '@rouse/protocol';
import { z } from 'zod';
import { resolveTiming } from '../timing.js';
import { POLICY_DEFAULTS } from './policy-defaults.js';

/** Names: policies, agent types, task types, dependencies, channels (as on the wire). */
export const NAME_PATTERN = /^[A-Za-z0-9_.:/-]+$/;
const NAME_RULE = 'must be letters, digits and _ . : / - only';
const name = z.string().min(1).max(128).regex(NAME_PATTERN, NAME_RULE);

/** What a recovery rung listens for: a condition, `stall_detected` (= `progress_stalled`), `recovery_failed` or `any`. */
export const ON_CONDITIONS = [...CONDITION_KINDS, 'stall_detected', 'recovery_failed', 'any'] as const;
/** A rung's action: what an intervention does (one list, the wire's). */
export const RECOVERY_ACTIONS = INTERVENTION_ACTIONS;
/** An alert rung's severity (one list, the wire's). */
export const SEVERITIES = ALERT_SEVERITIES;
/** Signals a `send_signal` rung may send (POSIX names; one list, the wire's). */
export { SIGNAL_NAMES, type SignalName };

/** A duration (number = seconds, or `30s`…) → ms, at least `minMs`. */
function duration(minMs = 0) {
  return z.unknown().transform((v, ctx): number => {
    if (v === undefined) return required(ctx);
    const r = parseDuration(v);
    if (!r.ok) return issue(ctx, r.message);
    if (r.value < minMs)
      return issue(ctx, `must be at least ${formatDuration(minMs)} (got ${formatDuration(r.value)})`);
    return r.value;
  });
}

/** A duration that may be `null` (off). */
function nullableDuration(minMs = 0) {
  return z.unknown().transform((v, ctx): number | null => {
    if (v === null) return null;
    if (v === undefined) return required(ctx);
    const r = parseDuration(v);
    if (!r.ok) return issue(ctx, `${r.message}, or null for none`);
    if (r.value < minMs)
      return issue(ctx, `must be at least ${formatDuration(minMs)} (got ${formatDuration(r.value)})`);
    return r.value;
  });
}

/** A size (number = bytes, or `4GiB`…) that may be `null` (no limit). */
const nullableSize = z.unknown().transform((v, ctx): number | null => {
  if (v === null) return null;
  const r = parseSize(v);
  return r.ok ? r.value : issue(ctx, r.message);
});

/** A size per minute: `50MiB` or `50MiB/min`; `null` = off. */
const nullableRate = z.unknown().transform((v, ctx): number | null => {
  if (v === null) return null;
  let text = v;
  if (typeof v === 'string') {
    const m = /^(.*?)\s*\/\s*([A-Za-z]+)$/.exec(v.trim());
    if (m !== null) {
      if (!['m', 'min', 'minute'].includes(m[2]!)) {
        return issue(
          ctx,
          `is a size per minute: write "${m[1]}" or "${m[1]}/min" (got ${JSON.stringify(v)})`,
        );
      }
      text = m[1];
    }
  }
  const r = parseSize(text);
  return r.ok ? r.value : issue(ctx, `${r.message} (per minute)`);
});

function issue(ctx: z.RefinementCtx, message: string): never {
  ctx.addIssue({ code: 'custom', message });
  return z.NEVER;
}
function required(ctx: z.RefinementCtx): never {
  return issue(ctx, 'is required');
}

const factor = z.number().min(1).max(100);

const heartbeat = z
  .strictObject({
    expected_interval: duration(100).optional(),
    timeout_factor: factor.optional(),
    adaptive: z.boolean().optional(),
    phi_threshold: z.number().gt(0).max(100).optional(),
    min_timeout: duration(100).optional(),
  })
  .superRefine((h, ctx) => {
    // Skip when a field it reads failed its own check (zod may still run this refinement).
    if (h.min_timeout === undefined || (h.timeout_factor !== undefined && h.timeout_factor < 1)) return;
    const d = POLICY_DEFAULTS.heartbeat;
    const timeout = Math.round(
      (h.timeout_factor ?? d.timeoutFactor) * (h.expected_interval ?? d.expectedIntervalMs),
    );
    if (h.min_timeout > timeout) {
      ctx.addIssue({
        code: 'custom',
        path: ['min_timeout'],
        message: `must not exceed the heartbeat timeout, timeout_factor × expected_interval = ${formatDuration(timeout)} (got ${formatDuration(h.min_timeout)})`,
      });
    }
  });

const stallDetection = z.strictObject({
  enabled: z.boolean().optional(),
  progress_field: z.string().min(1).max(128).nullable().optional(),
  stall_threshold: duration(1000).optional(),
});

const resources = z.strictObject({
  rss_limit: nullableSize.optional(),
  rss_growth: nullableRate.optional(),
  rss_window: duration(1000).optional(),
  min_fit: z.number().min(0).max(1).optional(),
  cpu_percent: z.number().gt(0).max(100_000).nullable().optional(),
  cpu_window: duration(1000).optional(),
  iteration_factor: z.number().min(1).max(1000).nullable().optional(),
  max_iteration: nullableDuration(1).optional(),
  min_baseline_samples: z.number().int().min(1).max(1_000_000).optional(),
});

/** Fields every rung has. */
const rungCommon = {
  on_condition: z.enum(ON_CONDITIONS),
  max_attempts: z.number().int().min(1).max(1000).optional(),
  window: duration(1000).optional(),
  timeout: duration(100).optional(),
};

/** A rung's own fields, by action (also used to say where a misplaced field belongs). */
export const RUNG_FIELDS: Record<(typeof RECOVERY_ACTIONS)[number], readonly string[]> = {
  wake: [],
  send_signal: ['signal'],
  snapshot_and_restart: ['snapshot_ttl'],
  reassign: [],
  alert: ['channels', 'severity'],
  terminate: ['grace'],
};

const rung = z.discriminatedUnion('action', [
  z.strictObject({ action: z.literal('wake'), ...rungCommon }),
  z.strictObject({
    action: z.literal('send_signal'),
    ...rungCommon,
    signal: z.enum(SIGNAL_NAMES).optional(),
  }),
  z.strictObject({
    action: z.literal('snapshot_and_restart'),
    ...rungCommon,
    snapshot_ttl: duration(1000).optional(),
  }),
  z.strictObject({ action: z.literal('reassign'), ...rungCommon }),
  z.strictObject({
    action: z.literal('alert'),
    ...rungCommon,
    channels: z.array(name).min(1).optional(),
    severity: z.enum(SEVERITIES).optional(),
  }),
  z.strictObject({ action: z.literal('terminate'), ...rungCommon, grace: duration(0).optional() }),
]);

const agentType = z
  .string()
  .min(1)
  .max(128)
  .refine((s) => s === '*' || NAME_PATTERN.test(s), {
    message: 'must be an agent type (letters, digits and _ . : / - only), or "*" for every other type',
  });

export const policySchema = z.strictObject({
  name,
  agent_type: agentType,
  heartbeat: heartbeat.optional(),
  startup_timeout: duration(100).optional(),
  quiet_period: duration(0).optional(),
  for: duration(0).optional(),
  stall_detection: stallDetection.optional(),
  resources: resources.optional(),
  error_timeout: nullableDuration(0).optional(),
  dependencies: z.array(name).max(32).optional(),
  recovery_actions: z.array(rung).max(32).optional(),
});

const expectedDuration = z.strictObject({ min: duration(0), max: duration(1) }).superRefine((d, ctx) => {
  if (d.min > d.max) {
    ctx.addIssue({
      code: 'custom',
      path: ['min'],
      message: `must not exceed max (${formatDuration(d.min)} > ${formatDuration(d.max)})`,
    });
  }
});

const backoff = z
  .strictObject({
    base: duration(0).optional(),
    cap: duration(0).optional(),
    jitter: z.number().min(0).max(1).optional(),
  })
  .superRefine((b, ctx) => {
    if (b.base !== undefined && b.cap !== undefined && b.cap < b.base) {
      ctx.addIssue({
        code: 'custom',
        path: ['cap'],
        message: `must be at least base (${formatDuration(b.cap)} < ${formatDuration(b.base)})`,
      });
    }
  });

export const taskTypeSchema = z
  .strictObject({
    heartbeat_interval: duration(100).optional(),
    timeout_factor: z
      .number()
      .gt(
        1,
        'must be > 1: the heartbeat timeout (timeout_factor × heartbeat_interval) must exceed the interval',
      )
      .max(100)
      .optional(),
    claim_timeout: duration(100).optional(),
    expected_duration: expectedDuration.optional(),
    execution_timeout: duration(100).optional(),
    stall_timeout: duration(1000).optional(),
    max_attempts: z.number().int().min(1).max(1000).optional(),
    backoff: backoff.optional(),
  })
  .superRefine((t, ctx) => {
    // The same rules a task's own timing passes on create (core/timing.ts), once the fields' own
    // checks hold (zod may run this refinement after a field's check failed).
    const d = t.expected_duration;
    if ((d !== undefined && d.min > d.max) || (t.timeout_factor !== undefined && t.timeout_factor <= 1))
      return;
    try {
      resolveTiming(taskTimingInput(t));
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `timing does not hold together: ${(err as Error).message}` });
    }
  });

/** A task type's timing in the wire's terms (ms), as given (absent fields stay absent). */
export function taskTimingInput(t: z.output<typeof taskTypeSchema>) {
  return stripUndefined({
    heartbeatIntervalMs: t.heartbeat_interval,
    timeoutFactor: t.timeout_factor,
    claimTimeoutMs: t.claim_timeout,
    expectedDurationMs: t.expected_duration,
    executionTimeoutMs: t.execution_timeout,
    stallTimeoutMs: t.stall_timeout,
  });
}

const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name (letters, digits, _)');
const httpUrl = z.string().refine(isHttpUrl, { message: 'must be an http:// or https:// URL' });
const email = z.string().regex(/^[^@\s]+@[^@\s]+$/, 'must be an email address such as oncall@example.com');

export const channelSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('webhook'), url: httpUrl, secret_env: envName.optional() }),
  z.strictObject({ type: z.literal('slack'), webhook_url: httpUrl }),
  z.strictObject({
    type: z.literal('email'),
    smtp: z.strictObject({
      host: z.string().min(1).max(253),
      port: z.number().int().min(1).max(65535),
      secure: z.boolean().optional(),
      user_env: envName.optional(),
      password_env: envName.optional(),
    }),
    from: email,
    to: z.array(email).min(1),
  }),
]);

export const alertsSchema = z.strictObject({
  group_wait: duration(0).optional(),
  group_interval: duration(1000).optional(),
  repeat_interval: duration(1000).optional(),
  escalate_after: nullableDuration(1000).optional(),
});

/** The whole file. */
export const policyFileSchema = z.strictObject({
  policies: z.array(policySchema).optional(),
  task_types: z.record(name, taskTypeSchema).optional(),
  channels: z.record(name, channelSchema).optional(),
  alerts: alertsSchema.optional(),
});

export type PolicyFileInput = z.output<typeof policyFileSchema>;
export type PolicyInput = z.output<typeof policySchema>;
export type RungInput = z.output<typeof rung>;
export type TaskTypeInput = z.output<typeof taskTypeSchema>;
export type ChannelInput = z.output<typeof channelSchema>;
export type AlertsInput = z.output<typeof alertsSchema>;

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

function stripUndefined<T extends object>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}
