/**
 * Option value parsers. Each throws a usage error (exit 2) — commander's `InvalidArgumentError`, or a
 * `CliError` for values checked in an action — with a message that says what was expected.
 */
import { InvalidArgumentError } from 'commander';
import { CliError, EXIT } from './context.js';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration and its unit, "500ms", "5s", "1.5m", "2h" or "1d", in milliseconds. A bare number is
 * refused, not guessed (`--heartbeat-interval 5` meaning 5 ms times every agent out at once); only
 * "0" needs no unit.
 */
export function parseDuration(value: string): number {
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) {
    if (Number(v) === 0) return 0;
    throw new InvalidArgumentError(noUnit(v));
  }
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/.exec(v);
  if (!m) {
    throw new InvalidArgumentError(
      `"${value}" is not a duration; write a number and its unit: 500ms, 5s, 1.5m, 2h`,
    );
  }
  return Math.round(Number(m[1]) * (UNIT_MS[m[2] as string] ?? 1));
}

/** The fix for a bare number: a small one was most likely meant in seconds, a large one in milliseconds. */
function noUnit(n: string, prefix = ''): string {
  const x = Number(n);
  const fix =
    x < 100
      ? `${prefix}${n}s (or ${prefix}${Math.round(x * 1000)}ms)`
      : `${prefix}${n}ms (or ${prefix}${x / 1000}s)`;
  return `"${prefix}${n}" has no unit; write ${fix}`;
}

/** "min..max" durations, e.g. "5s..5m". */
export function parseDurationRange(value: string): { min: number; max: number } {
  const parts = value.split('..');
  if (parts.length !== 2) throw new InvalidArgumentError(`expected min..max, e.g. 5s..5m (got "${value}")`);
  const min = parseDuration(parts[0] ?? '');
  const max = parseDuration(parts[1] ?? '');
  if (max < min) throw new InvalidArgumentError(`max must not be below min (got "${value}")`);
  if (max <= 0) throw new InvalidArgumentError(`max must be greater than 0 (got "${value}")`);
  return { min, max };
}

/** Epoch milliseconds before this (2001-09-09) are not a time anyone means to run a task at. */
const LEAST_EPOCH_MS = 1_000_000_000_000;

/**
 * When to run: a delay from now ("+30s", "+5m"), an ISO date ("2025-06-01T12:00:00Z") or epoch
 * milliseconds ("1764450000000"). A delay needs its unit, like any duration.
 */
export function parseRunAt(value: string, now: number): number {
  const v = value.trim();
  if (v.startsWith('+')) {
    const delay = v.slice(1).trim();
    if (/^\d+(\.\d+)?$/.test(delay) && Number(delay) !== 0)
      throw new InvalidArgumentError(noUnit(delay, '+'));
    return now + parseDuration(delay);
  }
  if (/^\d+$/.test(v)) {
    if (Number(v) < LEAST_EPOCH_MS) {
      throw new InvalidArgumentError(
        `"${value}" is not a time: for a delay write +${v}s, else an ISO date or epoch milliseconds`,
      );
    }
    return Number(v);
  }
  const t = Date.parse(v);
  if (Number.isNaN(t)) {
    throw new InvalidArgumentError(
      `expected a delay like +30s, an ISO date or epoch milliseconds (got "${value}")`,
    );
  }
  return t;
}

export function parseInteger(value: string): number {
  if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError(`expected an integer (got "${value}")`);
  return Number(value);
}

export function parsePositiveInteger(value: string): number {
  const n = parseInteger(value);
  if (n < 1) throw new InvalidArgumentError(`expected an integer >= 1 (got "${value}")`);
  return n;
}

/** A `--limit` of a list command: a whole number from 1 to 1000 (default 50). */
export function parseLimit(value: string | undefined): number {
  const n = Number(value ?? 50);
  if (!Number.isInteger(n) || n < 1 || n > 1000) {
    throw new CliError(`--limit: "${value}" must be a whole number from 1 to 1000`, EXIT.usage);
  }
  return n;
}

export function parsePort(value: string): number {
  const n = parseInteger(value);
  if (n < 0 || n > 65535)
    throw new InvalidArgumentError(`expected a port between 0 and 65535 (got "${value}")`);
  return n;
}

/** "a,b,c" → ["a","b","c"]; repeated flags accumulate. */
export function parseList(value: string, previous: string[] = []): string[] {
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) throw new InvalidArgumentError('expected a comma-separated list');
  return [...previous, ...items];
}

/** "key=value" (repeatable) → a record. */
export function parseLabel(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const i = value.indexOf('=');
  if (i <= 0) throw new InvalidArgumentError(`expected key=value (got "${value}")`);
  return { ...previous, [value.slice(0, i)]: value.slice(i + 1) };
}

/**
 * `--flag a,b` → the values, each one of `known`; the first that is not is a usage error naming it:
 * `--status: "asleep" is not a status; use idle, running, …`.
 */
export function parseChoiceList<T extends string>(
  flag: string,
  noun: string,
  value: string,
  known: readonly T[],
): T[] {
  return value.split(',').map((s) => {
    const v = s.trim();
    if (!(known as readonly string[]).includes(v)) {
      throw new CliError(`${flag}: "${v}" is not ${noun}; use ${known.join(', ')}`, EXIT.usage);
    }
    return v as T;
  });
}
