/** Request schemas of the watchdog routes (docs/protocol.md "The watchdog"). */
import { z } from 'zod';
import { AGENT_STATUSES, ALERT_STATES, INTERVENTION_STATES } from '../vocabulary.js';
import { name } from './common.js';

export const listAgentsQuery = z
  .object({
    /** Comma-separated derived statuses. */
    status: z
      .string()
      .transform((s) => s.split(','))
      .pipe(z.array(z.enum(AGENT_STATUSES, { message: `one of ${AGENT_STATUSES.join(', ')}` })))
      .optional(),
    agentType: name.optional(),
    taskType: name.optional(),
    /** Agents per page (default 1000). */
    limit: z.coerce.number().int().min(1).max(10_000).optional(),
    cursor: z.string().max(256).optional(),
  })
  .strict();

/** The largest policy file `POST /v1/policies/check` takes. */
export const MAX_POLICY_SOURCE_BYTES = 512 * 1024;

export const checkPolicies = z
  .object({
    source: z.string().max(MAX_POLICY_SOURCE_BYTES).describe('The policy file (YAML) to check.'),
    file: z.string().min(1).max(1024).optional().describe('The name errors are reported under.'),
  })
  .strict();

export const interventionsQuery = z
  .object({
    agentId: z.string().min(1).max(64).optional(),
    taskId: z.string().min(1).max(64).optional(),
    /** Comma-separated states. */
    state: z
      .string()
      .transform((s) => s.split(','))
      .pipe(z.array(z.enum(INTERVENTION_STATES, { message: `one of ${INTERVENTION_STATES.join(', ')}` })))
      .optional(),
    /** Interventions per page (default 100). */
    limit: z.coerce.number().int().min(1).max(1000).optional(),
    cursor: z.string().max(256).optional(),
  })
  .strict();

export const conditionsQuery = z
  .object({
    open: z.enum(['true', 'false']).optional(),
    limit: z.coerce.number().int().min(1).max(1000).optional(),
  })
  .strict();

export const alertsQuery = z
  .object({
    /** Comma-separated states (`firing`, `resolved`). */
    state: z
      .string()
      .transform((s) => s.split(','))
      .pipe(z.array(z.enum(ALERT_STATES, { message: `one of ${ALERT_STATES.join(', ')}` })))
      .optional(),
    /** Alerts per page (default 100). */
    limit: z.coerce.number().int().min(1).max(1000).optional(),
    cursor: z.string().max(256).optional(),
  })
  .strict();
