/**
 * Messages for what zod finds wrong in a policy file, in the file's terms ("expected a duration…",
 * "unknown key "expected_intervall" (did you mean "expected_interval"?)"), and near-miss hints.
 * `collectIssues` runs the schema and turns its issues into path + message pairs, one per unknown key.
 */
import type { z } from 'zod';
import { RECOVERY_ACTIONS, RUNG_FIELDS } from './policy-schema.js';
import type { PathSegment } from './yaml-locations.js';

/** One thing wrong, where (a value's path, or a key of the mapping at `path`), and why. */
export interface FileIssue {
  path: PathSegment[];
  /** Set when the issue is about a key of the mapping at `path` (point at the key, not the value). */
  key?: string;
  message: string;
}

type RawIssue = z.core.$ZodRawIssue;

/** Parses `data` with `schema`; every issue becomes a `FileIssue` (unknown keys one each). */
export function collectIssues<T extends z.ZodType>(
  schema: T,
  data: unknown,
): { ok: true; value: z.output<T> } | { ok: false; issues: FileIssue[] } {
  const allowedKeys = new Map<string, string[]>();
  const result = schema.safeParse(data, {
    error: (iss) => {
      if (iss.code === 'unrecognized_keys') {
        const shape = (iss.inst as { _zod?: { def?: { shape?: object } } } | undefined)?._zod?.def?.shape;
        if (shape) allowedKeys.set(pathKey(iss.path ?? []), Object.keys(shape));
      }
      return messageFor(iss, data);
    },
  });
  if (result.success) return { ok: true, value: result.data };
  const issues: FileIssue[] = [];
  for (const iss of result.error.issues) {
    const path = iss.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
    if (iss.code === 'unrecognized_keys') {
      const allowed = allowedKeys.get(pathKey(path)) ?? [];
      for (const key of iss.keys) {
        issues.push({ path, key, message: unknownKeyMessage(key, allowed, valueAt(data, path)) });
      }
    } else if (iss.code === 'invalid_key') {
      const key = String(path.at(-1));
      issues.push({
        path: path.slice(0, -1),
        key,
        message: `${JSON.stringify(key)}: ${iss.issues[0]?.message ?? 'is not a valid name'}`,
      });
    } else {
      issues.push({ path, message: iss.message });
    }
  }
  return { ok: false, issues };
}

/** The message for one issue (zod's default wording replaced by the file's terms). */
function messageFor(iss: RawIssue, data: unknown): string | undefined {
  switch (iss.code) {
    case 'invalid_type':
      if (iss.input === undefined) return 'is required';
      return `expected ${typeName(iss.expected)}, got ${describe(iss.input)}`;
    case 'invalid_value': {
      const values = iss.values.map((v) => String(v));
      if (iss.input === undefined) return `is required: one of ${values.join(', ')}`;
      return `expected one of ${values.join(', ')}; got ${describe(iss.input)}${hint(String(iss.input), values)}`;
    }
    case 'too_small':
      return sizeMessage('at least', iss.minimum, iss.inclusive, iss.origin, iss.input);
    case 'too_big':
      return sizeMessage('at most', iss.maximum, iss.inclusive, iss.origin, iss.input);
    case 'invalid_union': {
      const discriminator = (iss as { discriminator?: string }).discriminator;
      const options = (iss as { options?: unknown[] }).options?.map(String);
      if (discriminator === undefined || options === undefined) return 'does not match any allowed form';
      const value = valueAt(data, (iss.path ?? []) as PathSegment[]);
      if (value === undefined) return `is required: one of ${options.join(', ')}`;
      return `unknown ${discriminator} ${describe(value)}: expected one of ${options.join(', ')}${hint(String(value), options)}`;
    }
    default:
      return undefined;
  }
}

function sizeMessage(
  bound: 'at least' | 'at most',
  limit: unknown,
  inclusive: boolean | undefined,
  origin: string,
  input: unknown,
): string {
  const n = Number(limit);
  if (origin === 'array' || origin === 'set') return `needs ${bound} ${n} item${n === 1 ? '' : 's'}`;
  if (origin === 'string') {
    return bound === 'at least' && n === 1 ? 'must not be empty' : `must be ${bound} ${n} characters long`;
  }
  const cmp = inclusive === false ? (bound === 'at least' ? 'greater than' : 'less than') : bound;
  return `must be ${cmp} ${n} (got ${describe(input)})`;
}

function unknownKeyMessage(key: string, allowed: readonly string[], parent: unknown): string {
  const base = `unknown key ${JSON.stringify(key)}`;
  // A field of another kind of rung: say where it belongs.
  const action = isObject(parent) ? parent.action : undefined;
  if (typeof action === 'string' && allowed.includes('on_condition')) {
    const owners = RECOVERY_ACTIONS.filter((a) => RUNG_FIELDS[a].includes(key));
    if (owners.length > 0) return `${base}: it belongs to ${owners.join(' or ')} rungs, not ${action}`;
  }
  const close = hint(key, allowed);
  return close === '' ? `${base}; allowed here: ${allowed.join(', ')}` : `${base}${close}`;
}

/** ` (did you mean "x"?)` for the closest candidate within a small edit distance or a shared prefix, else "". */
export function hint(word: string, candidates: readonly string[]): string {
  let best: string | null = null;
  let bestScore = Infinity;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    const prefix = commonPrefix(word.toLowerCase(), c.toLowerCase());
    // within a few edits, or the same start (`polices`), or the tail of it (`USR1` for `SIGUSR1`)
    const tail = word.length >= 3 && c.toLowerCase().endsWith(word.toLowerCase());
    const close = d <= Math.max(2, Math.floor(c.length / 4)) || prefix >= 5 || tail;
    if (close && d < bestScore) {
      best = c;
      bestScore = d;
    }
  }
  return best === null || best === word ? '' : ` (did you mean ${JSON.stringify(best)}?)`;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

function typeName(expected: string): string {
  const names: Record<string, string> = {
    object: 'a mapping',
    array: 'a list',
    string: 'a string',
    number: 'a number',
    int: 'an integer',
    boolean: 'true or false',
    null: 'null',
  };
  return names[expected] ?? expected;
}

/** A value as the message shows it. */
function describe(v: unknown): string {
  if (v === null) return 'null (an empty value)';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') return JSON.stringify(v.length > 60 ? `${v.slice(0, 57)}...` : v);
  return String(v);
}

function valueAt(data: unknown, path: readonly PathSegment[]): unknown {
  let v = data;
  for (const seg of path) {
    if (Array.isArray(v) && typeof seg === 'number') v = v[seg];
    else if (isObject(v)) v = v[String(seg)];
    else return undefined;
  }
  return v;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const pathKey = (path: readonly PropertyKey[]) => path.map(String).join('\u0000');
