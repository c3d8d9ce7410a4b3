/**
 * A coding-agent task's payload and carried session, checked (pure). The payload:
 * `{prompt, cwd?, model?, maxTurns?, maxBudgetUsd?, maxTokens?, maxCostUsd?, maxWallClockMs?}`; any
 * field but `prompt` may also come from the adapter's defaults for the task's type. The session the
 * adapter saves: `{flavor, sessionId, transcript: BlobRef | null}`.
 */
import type { BudgetLimits } from './budget.js';

/** What the adapter's options may give per task type (the payload's own fields win). */
export interface CliTypeDefaults extends BudgetLimits {
  model?: string | null;
  /** Passed to the CLI natively where it has a flag (Claude `--max-turns`) and checked by the adapter. */
  maxTurns?: number | null;
  /** Passed to the CLI natively where it has a flag (Claude `--max-budget-usd`). */
  maxBudgetUsd?: number | null;
}

export interface CliPayload {
  prompt: string;
  cwd: string | null;
  model: string | null;
  maxBudgetUsd: number | null;
  limits: Required<{ [K in keyof BudgetLimits]: number | null }>;
}

/** A payload the adapter cannot run: the task fails for good with this message. */
export class PayloadError extends Error {}

const LIMITS = ['maxTokens', 'maxCostUsd', 'maxTurns', 'maxWallClockMs', 'maxBudgetUsd'] as const;
const INTEGER = new Set(['maxTokens', 'maxTurns', 'maxWallClockMs']);

export function parseCliPayload(payload: unknown, defaults: CliTypeDefaults = {}): CliPayload {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new PayloadError('payload must be an object {"prompt": "..."}');
  }
  const p = payload as Record<string, unknown>;
  if (typeof p.prompt !== 'string' || p.prompt.trim() === '') {
    throw new PayloadError('payload.prompt must be a non-empty string');
  }
  for (const k of ['cwd', 'model'] as const) {
    if (p[k] !== undefined && p[k] !== null && (typeof p[k] !== 'string' || p[k] === '')) {
      throw new PayloadError(`payload.${k} must be a non-empty string`);
    }
  }
  if (typeof p.cwd === 'string' && !p.cwd.startsWith('/')) {
    throw new PayloadError('payload.cwd must be an absolute path');
  }
  const num: Record<string, number | null> = {};
  for (const k of LIMITS) {
    const v = p[k] ?? defaults[k] ?? null;
    if (
      v !== null &&
      (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || (INTEGER.has(k) && !Number.isInteger(v)))
    ) {
      throw new PayloadError(
        `${k} must be a ${INTEGER.has(k) ? 'positive integer' : 'positive number'} (got ${JSON.stringify(v)})`,
      );
    }
    num[k] = v as number | null;
  }
  return {
    prompt: p.prompt,
    cwd: (p.cwd as string | undefined) ?? null,
    model: (p.model as string | undefined) ?? defaults.model ?? null,
    maxBudgetUsd: num.maxBudgetUsd ?? null,
    limits: {
      maxTokens: num.maxTokens ?? null,
      maxCostUsd: num.maxCostUsd ?? null,
      maxTurns: num.maxTurns ?? null,
      maxWallClockMs: num.maxWallClockMs ?? null,
    },
  };
}

/** A blob reference as the coordinator returns it. */
export interface CarriedBlobRef {
  id: string;
  bytes: number;
  sha256: string;
  contentType: string;
}

export interface CarriedSession {
  flavor: string;
  sessionId: string;
  transcript: CarriedBlobRef | null;
}

/** The session a previous attempt saved, if it is one of `flavor`'s; anything else is ignored. */
export function readCarriedSession(session: unknown, flavor: string): CarriedSession | null {
  if (typeof session !== 'object' || session === null) return null;
  const s = session as Record<string, unknown>;
  if (s.flavor !== flavor || typeof s.sessionId !== 'string' || s.sessionId === '') return null;
  const t = s.transcript as Record<string, unknown> | null | undefined;
  const transcript =
    t && typeof t.id === 'string' && typeof t.bytes === 'number' && typeof t.sha256 === 'string'
      ? { id: t.id, bytes: t.bytes, sha256: t.sha256, contentType: String(t.contentType ?? '') }
      : null;
  return { flavor, sessionId: s.sessionId, transcript };
}
