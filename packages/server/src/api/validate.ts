/**
 * Schema validation at the edge: one `safeParse` per input; failures become `400 validation_failed`
 * whose details name each field and the rule it broke.
 */
import type { z } from 'zod';
import { RouseError } from '../core/errors.js';

export interface ValidationIssue {
  /** Dotted path of the offending field (`tasks.0.type`); `""` is the whole body. */
  path: string;
  message: string;
  code: string;
}

/** Parse `value` with `schema` or throw `validation_failed`. `where` prefixes the message only. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  where: 'body' | 'query' | 'path',
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map(toIssue);
  const first = issues[0];
  const at = first?.path ? `${where}.${first.path}` : where;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  throw new RouseError('validation_failed', `${at}: ${first?.message ?? 'invalid'}${more}`, { issues });
}

function toIssue(issue: z.core.$ZodIssue): ValidationIssue {
  const segments = issue.path.map((p) => String(p));
  // Unknown keys are reported on the parent; name the key itself so the caller sees which field.
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys;
    return {
      path: [...segments, keys[0] ?? ''].filter((s) => s !== '').join('.'),
      message: `unknown field${keys.length > 1 ? 's' : ''} ${keys.map((k) => JSON.stringify(k)).join(', ')} (not allowed)`,
      code: issue.code,
    };
  }
  return { path: segments.join('.'), message: issue.message, code: issue.code };
}
