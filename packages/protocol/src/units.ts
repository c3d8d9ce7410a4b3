/**
 * Units of the policy file (and the supervisor's config): durations and sizes as a person writes them.
 *
 * - A duration is a number of seconds (`30`, `0.5`) or a string with a unit: `500ms`, `30s`, `5m`,
 *   `1h`, `1d` (decimals allowed: `1.5s`, `.5h`). Parsed to whole milliseconds.
 * - A size is a number of bytes (`1048576`) or a string with a unit: decimal `B`, `kB`/`KB`, `MB`,
 *   `GB`, `TB` (powers of 1000) or binary `KiB`, `MiB`, `GiB`, `TiB` (powers of 1024; `Ki`, `Mi`, …
 *   too). Unit letters are not case-sensitive (`mib` = `MiB`). Parsed to whole bytes.
 *
 * Parsers return a result instead of throwing, with a message that shows what is expected and, for
 * a near miss (`5 minutes`, `4G`), what was probably meant.
 */

export type UnitResult = { ok: true; value: number } | { ok: false; message: string };

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** Words people write for a unit, mapped to the unit we take. */
const DURATION_WORDS: Record<string, string> = {
  milli: 'ms',
  millis: 'ms',
  msec: 'ms',
  msecs: 'ms',
  millisecond: 'ms',
  milliseconds: 'ms',
  sec: 's',
  secs: 's',
  second: 's',
  seconds: 's',
  min: 'm',
  mins: 'm',
  minute: 'm',
  minutes: 'm',
  hr: 'h',
  hrs: 'h',
  hour: 'h',
  hours: 'h',
  day: 'd',
  days: 'd',
};
const KB = 1000;
const KIB = 1024;
const SIZE_UNITS: Record<string, number> = {
  b: 1,
  kb: KB,
  mb: KB ** 2,
  gb: KB ** 3,
  tb: KB ** 4,
  kib: KIB,
  mib: KIB ** 2,
  gib: KIB ** 3,
  tib: KIB ** 4,
  ki: KIB,
  mi: KIB ** 2,
  gi: KIB ** 3,
  ti: KIB ** 4,
};

const NUMBER = String.raw`(\d+(?:\.\d*)?|\.\d+)`;
const WITH_UNIT = new RegExp(String.raw`^${NUMBER}\s*([A-Za-z]+)$`);
const BARE = new RegExp(`^${NUMBER}$`);

const DURATION_EXPECTED = 'expected a duration such as 30 (seconds) or "30s", "500ms", "5m", "1h", "1d"';
const SIZE_EXPECTED = 'expected a size such as 1048576 (bytes) or "512KiB", "100MB", "4GiB"';

/** A duration (see the module doc) → milliseconds. */
export function parseDuration(input: unknown): UnitResult {
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) return fail(DURATION_EXPECTED, input);
    if (input < 0) return { ok: false, message: `must not be negative (got ${input})` };
    return { ok: true, value: Math.round(input * 1000) };
  }
  if (typeof input !== 'string') return fail(DURATION_EXPECTED, input);
  const text = input.trim();
  if (text.startsWith('-'))
    return { ok: false, message: `must not be negative (got ${JSON.stringify(input)})` };
  if (BARE.test(text)) return { ok: true, value: Math.round(Number(text) * 1000) };
  const m = WITH_UNIT.exec(text);
  if (m === null) return fail(DURATION_EXPECTED, input);
  const amount = Number(m[1]);
  const unit = m[2]!;
  const factor = DURATION_UNITS[unit];
  if (factor !== undefined) return { ok: true, value: Math.round(amount * factor) };
  const meant =
    DURATION_WORDS[unit.toLowerCase()] ?? (DURATION_UNITS[unit.toLowerCase()] ? unit.toLowerCase() : null);
  return fail(DURATION_EXPECTED, input, meant === null ? null : `"${m[1]}${meant}"`);
}

/** A size (see the module doc) → bytes. */
export function parseSize(input: unknown): UnitResult {
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) return fail(SIZE_EXPECTED, input);
    if (input < 0) return { ok: false, message: `must not be negative (got ${input})` };
    return { ok: true, value: Math.round(input) };
  }
  if (typeof input !== 'string') return fail(SIZE_EXPECTED, input);
  const text = input.trim();
  if (text.startsWith('-'))
    return { ok: false, message: `must not be negative (got ${JSON.stringify(input)})` };
  if (BARE.test(text)) return { ok: true, value: Math.round(Number(text)) };
  const m = WITH_UNIT.exec(text);
  if (m === null) return fail(SIZE_EXPECTED, input);
  const unit = m[2]!.toLowerCase();
  const factor = SIZE_UNITS[unit];
  if (factor !== undefined) return { ok: true, value: Math.round(Number(m[1]) * factor) };
  // `4G`, `512K`: ambiguous between 1000 and 1024; say both.
  const ambiguous = { k: 'K', m: 'M', g: 'G', t: 'T' }[unit];
  const hint = ambiguous
    ? `"${m[1]}${ambiguous}iB" (powers of 1024) or "${m[1]}${ambiguous}B" (of 1000)`
    : null;
  return fail(SIZE_EXPECTED, input, hint);
}

/** A duration for messages: `250ms`, `30s`, `1.5s`, `5m`, `2h30m`, `1d`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60_000 || ms % 1000 !== 0) return `${trim(ms / 1000)}s`;
  const parts: string[] = [];
  let rest = ms / 1000;
  for (const [unit, secs] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    const n = Math.floor(rest / secs);
    if (n > 0) parts.push(`${n}${unit}`);
    rest -= n * secs;
  }
  return parts.join('');
}

/** A size for messages: bytes below 1 KiB, else the largest binary unit with up to one decimal. */
export function formatSize(bytes: number): string {
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  if (Math.abs(bytes) < KIB) return `${bytes} B`;
  let value = bytes / KIB;
  let i = 0;
  while (Math.abs(value) >= KIB && i < units.length - 1) {
    value /= KIB;
    i++;
  }
  return `${trim(value)} ${units[i]}`;
}

function trim(x: number): string {
  return String(Math.round(x * 10) / 10);
}

function fail(expected: string, input: unknown, meant: string | null = null): UnitResult {
  const got = input === undefined ? 'nothing' : (JSON.stringify(input) ?? String(input));
  return {
    ok: false,
    message: `${expected}; got ${got}${meant === null ? '' : ` (did you mean ${meant}?)`}`,
  };
}
