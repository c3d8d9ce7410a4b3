/**
 * Option value parsers. Each throws commander's `InvalidArgumentError` (a usage error, exit 2) with a
 * message that says what was expected.
 */
import { InvalidArgumentError } from 'commander';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "500ms", "5s", "1.5m", "2h", "1d"; a bare number is milliseconds. */
export function parseDuration(value: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/.exec(value.trim());
  if (!m) throw new InvalidArgumentError(`expected a duration such as 500ms, 5s, 3m or 1h (got "${value}")`);
  const ms = Number(m[1]) * (UNIT_MS[m[2] ?? 'ms'] ?? 1);
  return Math.round(ms);
}

/** A positive duration in milliseconds. */
export function parsePositiveDuration(value: string): number {
  const ms = parseDuration(value);
  if (ms <= 0) throw new InvalidArgumentError(`must be greater than 0 (got "${value}")`);
  return ms;
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

/**
 * When to run: an ISO date ("2025-06-01T12:00:00Z"), epoch milliseconds ("1764450000000") or a delay
 * from now ("+30s", "+5m").
 */
export function parseRunAt(value: string, now: number): number {
  const v = value.trim();
  if (v.startsWith('+')) return now + parseDuration(v.slice(1));
  if (/^\d+$/.test(v)) return Number(v);
  const t = Date.parse(v);
  if (Number.isNaN(t)) {
    throw new InvalidArgumentError(`expected an ISO date, epoch milliseconds or +30s (got "${value}")`);
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
