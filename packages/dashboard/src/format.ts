/** Pure formatting helpers; `now` is always passed in (the views hold no clock). */
import type { Json } from '@rouse/protocol';

/** `2026-12-02 07:41:09Z`: an absolute time, in UTC. */
export function isoTime(ms: number | null): string {
  if (ms === null) return '—';
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')}Z`;
}

/** `850 ms`, `4.2 s`, `3 min 5 s`, `5 min`, `2 h 10 min`, `1 h`, `3 d 4 h` (a zero second unit is left out). */
export function duration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(ms)} ms`;
  if (abs < 60_000) return `${(ms / 1000).toFixed(abs < 10_000 ? 1 : 0)} s`;
  const s = Math.round(abs / 1000);
  const sign = ms < 0 ? '-' : '';
  const two = (big: number, bigUnit: string, small: number, smallUnit: string) =>
    small === 0 ? `${sign}${big} ${bigUnit}` : `${sign}${big} ${bigUnit} ${small} ${smallUnit}`;
  if (s < 3600) return two(Math.floor(s / 60), 'min', s % 60, 's');
  if (s < 86_400) return two(Math.floor(s / 3600), 'h', Math.floor((s % 3600) / 60), 'min');
  return two(Math.floor(s / 86_400), 'd', Math.floor((s % 86_400) / 3600), 'h');
}

/** `12 s ago`, `in 3 min`, or `—`. */
export function ago(ms: number | null, now: number): string {
  if (ms === null) return '—';
  const d = now - ms;
  if (Math.abs(d) < 1000) return 'now';
  return d >= 0 ? `${duration(d)} ago` : `in ${duration(-d)}`;
}

export function percent(x: number): string {
  return `${(x * 100).toFixed(x < 0.1 && x > 0 ? 1 : 0)} %`;
}

/** The `p`-th percentile (0..1) of ascending `sorted`, or null when empty (nearest rank). */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[i] ?? null;
}

export function prettyJson(value: Json | undefined): string {
  return JSON.stringify(value ?? null, null, 2);
}
