/**
 * The human rendering of a diagnosis ("why isn't my task running?"): a headline, each reason with its
 * evidence (times as "12s ago", durations as "1.5s"), then what to do about it.
 */
import type { AgentDiagnosis, Diagnosis, Json } from '@rouse/protocol';
import type { Style } from './style.js';
import { compactJson } from './task.js';
import { formatClock, formatDuration, formatRelative } from './time.js';

/**
 * "lastPollAt" → "last poll at"; "sinceLastMs" → "since last" (its value is written as a duration, so
 * the unit in the name would say it twice).
 */
export function humanizeKey(key: string): string {
  return key
    .replace(/(.)Ms$/, '$1')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/_/g, ' ')
    .toLowerCase();
}

/** Render one evidence value according to the unit in its name. */
export function formatEvidence(key: string, value: Json | undefined, now: number): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'number') {
    if (/(At|Until)$/.test(key) || key === 'since' || key === 'until')
      return `${formatRelative(value, now)} (${formatClock(value)})`;
    if (/Ms$/.test(key)) return formatDuration(value);
    if (/Bytes$/.test(key)) return `${value} bytes`;
    return String(value);
  }
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null)) {
    return value.length ? value.map((v) => String(v)).join(', ') : '(none)';
  }
  if (typeof value === 'object' && !Array.isArray(value) && typeof value.code === 'string') {
    // an error: "code: message"
    return typeof value.message === 'string' ? `${value.code}: ${value.message}` : value.code;
  }
  return compactJson(value, 120);
}

/** A task's or an agent's diagnosis (the same shape: summary, reasons with evidence, suggestions). */
export function renderDiagnosis(d: Diagnosis | AgentDiagnosis, now: number, style: Style): string[] {
  const out: string[] = [];
  // the summary names the task and its status: "Task tsk_… is created: no live agent serves …"
  out.push(style.bold(d.summary));
  if (d.reasons.length) {
    out.push('');
    out.push(style.bold(d.reasons.length === 1 ? 'Reason' : 'Reasons'));
    for (const r of d.reasons) {
      const since = r.since !== null ? style.dim(`  (since ${formatRelative(r.since, now)})`) : '';
      // a single reason is usually the summary already: then the code is enough
      const text = d.summary.includes(r.message)
        ? style.bold(r.code)
        : `${r.message} ${style.dim(`[${r.code}]`)}`;
      out.push(`  ${style.yellow('●')} ${text}${since}`);
      const entries = Object.entries(r.details ?? {});
      const width = Math.max(0, ...entries.map(([k]) => humanizeKey(k).length));
      for (const [k, v] of entries) {
        out.push(`      ${style.dim(`${humanizeKey(k).padEnd(width)}`)}  ${formatEvidence(k, v, now)}`);
      }
    }
  }
  if ('recovery' in d && d.recovery.state !== 'idle') {
    out.push('');
    out.push(`${style.bold('Recovery')}  ${d.recovery.message} ${style.dim(`[${d.recovery.state}]`)}`);
    for (const i of d.recovery.interventions) {
      const rung = i.rung === null ? 'manual' : `rung ${i.rung + 1}, attempt ${i.attempt}`;
      out.push(
        `  ${style.dim(i.id)}  ${i.action} (${rung}) ${i.state}  ${style.dim(`${formatRelative(i.endedAt ?? i.startedAt, now)}: ${i.reason}`)}`,
      );
    }
  }
  if (d.suggestions.length) {
    out.push('');
    out.push(style.bold('What you can do'));
    for (const s of d.suggestions) out.push(`  → ${s}`);
  }
  return out;
}
