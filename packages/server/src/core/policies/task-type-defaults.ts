/**
 * Timing defaults per task type (`task_types:` in the policy file): what a task of that type gets
 * when its create request leaves a field out. The timing stays an input (ms, as on create), so the
 * task's own `timing` overrides it field by field and `resolveTiming` derives the rest.
 */
import type { JsonObject, TimingInput } from '@rouse/protocol';
import { DEFAULT_BACKOFF, type ResolvedBackoffOptions } from '../backoff.js';
import { type TaskTypeInput, taskTimingInput } from './policy-schema.js';

export interface TaskTypeDefaults {
  /** Timing fields the file gives for the type (absent ones are absent here too). */
  timing: TimingInput;
  /** Attempts for tasks of the type, when the file gives them. */
  maxAttempts?: number;
  /** Retry backoff for the type (fields the file leaves out take the global defaults), when given. */
  backoff?: ResolvedBackoffOptions;
}

/** One parsed `task_types.<type>` entry → its defaults. */
export function resolveTaskType(t: TaskTypeInput): TaskTypeDefaults {
  const out: TaskTypeDefaults = { timing: taskTimingInput(t) };
  if (t.max_attempts !== undefined) out.maxAttempts = t.max_attempts;
  if (t.backoff !== undefined) {
    out.backoff = {
      baseMs: t.backoff.base ?? DEFAULT_BACKOFF.baseMs,
      capMs: t.backoff.cap ?? Math.max(DEFAULT_BACKOFF.capMs, t.backoff.base ?? 0),
      jitter: t.backoff.jitter ?? DEFAULT_BACKOFF.jitter,
    };
  }
  return out;
}

/** The wire form (`PoliciesResponse.taskTypes` entries). */
export function taskTypeView(d: TaskTypeDefaults): JsonObject {
  const out: JsonObject = { timing: { ...d.timing } as JsonObject };
  if (d.maxAttempts !== undefined) out.maxAttempts = d.maxAttempts;
  if (d.backoff !== undefined) out.backoff = { ...d.backoff };
  return out;
}
