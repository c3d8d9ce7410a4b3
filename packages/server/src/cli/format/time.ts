/** Human-friendly durations ("850ms", "1.2s", "3m", "2h 5m") and relative times ("12s ago", "in 5s"). */

/** Format a duration in milliseconds. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '∞';
  const neg = ms < 0;
  const a = Math.abs(ms);
  let s: string;
  if (a < 1000) s = `${Math.round(a)}ms`;
  else if (a < 10_000) s = `${trim((a / 1000).toFixed(1))}s`;
  else if (a < 60_000) s = `${Math.round(a / 1000)}s`;
  else if (a < 3_600_000) {
    const m = Math.floor(a / 60_000);
    const sec = Math.round((a % 60_000) / 1000);
    s = sec && m < 10 ? `${m}m ${sec}s` : `${m}m`;
  } else if (a < 86_400_000) {
    const h = Math.floor(a / 3_600_000);
    const m = Math.round((a % 3_600_000) / 60_000);
    s = m ? `${h}h ${m}m` : `${h}h`;
  } else {
    const d = Math.floor(a / 86_400_000);
    const h = Math.round((a % 86_400_000) / 3_600_000);
    s = h ? `${d}d ${h}h` : `${d}d`;
  }
  return neg ? `-${s}` : s;
}

function trim(s: string): string {
  return s.endsWith('.0') ? s.slice(0, -2) : s;
}

/** "12s ago" for a past time, "in 5s" for a future one, "now" within a second. */
export function formatRelative(at: number | null | undefined, now: number): string {
  if (at === null || at === undefined) return '-';
  const d = now - at;
  if (Math.abs(d) < 1000) return 'now';
  return d > 0 ? `${formatDuration(d)} ago` : `in ${formatDuration(-d)}`;
}

/** Local wall-clock time with milliseconds, e.g. "14:03:27.120". */
export function formatClock(at: number): string {
  const d = new Date(at);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}
