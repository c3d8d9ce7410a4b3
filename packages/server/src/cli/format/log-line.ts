/**
 * A pretty one-line rendering of pino's JSON log records for terminals (no pino-pretty):
 * `14:03:27.120 INFO  api  request completed  method=GET url=/v1/tasks status=200`.
 */

import type { Style } from './style.js';
import { formatClock } from './time.js';

const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};
const HIDDEN = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'component', 'v']);

export function formatLogRecord(line: string, style: Style): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.trimEnd();
  }
  const levelNum = typeof rec.level === 'number' ? rec.level : 30;
  let level = (LEVELS[levelNum] ?? String(rec.level)).padEnd(5);
  if (levelNum >= 50) level = style.red(level);
  else if (levelNum >= 40) level = style.yellow(level);
  else if (levelNum <= 20) level = style.dim(level);
  const time = typeof rec.time === 'number' ? formatClock(rec.time) : '';
  const parts = [style.dim(time), level];
  if (typeof rec.component === 'string') parts.push(style.cyan(rec.component));
  if (typeof rec.msg === 'string') parts.push(rec.msg);
  const fields: string[] = [];
  let stack: string | undefined;
  for (const [k, v] of Object.entries(rec)) {
    if (HIDDEN.has(k) || v === undefined) continue;
    if (k === 'err' && v && typeof v === 'object') {
      const e = v as { message?: string; stack?: string };
      fields.push(`err=${JSON.stringify(e.message ?? '')}`);
      stack = e.stack;
      continue;
    }
    fields.push(`${k}=${typeof v === 'string' && !/\s/.test(v) ? v : JSON.stringify(v)}`);
  }
  if (fields.length) parts.push(style.dim(fields.join(' ')));
  const out = parts.filter(Boolean).join('  ');
  return stack && levelNum >= 50 ? `${out}\n${style.dim(stack)}` : out;
}

/** A pino destination that pretty-prints each record to `write`. */
export function prettyDestination(write: (s: string) => void, style: Style): { write(chunk: string): void } {
  let buffered = '';
  return {
    write(chunk: string) {
      buffered += chunk;
      let nl = buffered.indexOf('\n');
      while (nl >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line.trim()) write(`${formatLogRecord(line, style)}\n`);
        nl = buffered.indexOf('\n');
      }
    },
  };
}
