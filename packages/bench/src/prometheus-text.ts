/**
 * Reading series out of the coordinator's `GET /metrics` (Prometheus text format): sums of counter
 * series by label, and a histogram's cumulative buckets, so a workload can difference two scrapes
 * around its measured phase.
 */

/** Labels of a series line (`name{a="x",b="y"} 3` → `{a: 'x', b: 'y'}`). */
function labelsOf(line: string): Record<string, string> {
  const open = line.indexOf('{');
  if (open < 0) return {};
  const out: Record<string, string> = {};
  for (const m of line.slice(open, line.indexOf('}', open)).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
    out[m[1]!] = m[2]!;
  }
  return out;
}

function seriesValue(line: string): number {
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

function isSeries(line: string, name: string): boolean {
  return line.startsWith(`${name}{`) || line.startsWith(`${name} `);
}

/** The sum of every series of `name` whose labels include `match` (0 when there is none). */
export function sumSeries(text: string, name: string, match: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!isSeries(line, name)) continue;
    const labels = labelsOf(line);
    if (Object.entries(match).every(([k, v]) => labels[k] === v)) {
      const v = seriesValue(line);
      if (Number.isFinite(v)) sum += v;
    }
  }
  return sum;
}

/** Every series of `name` by the value of one label (`{running: 9900, lost: 100}`). */
export function seriesByLabel(text: string, name: string, label: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!isSeries(line, name)) continue;
    const key = labelsOf(line)[label];
    if (key !== undefined) out[key] = (out[key] ?? 0) + seriesValue(line);
  }
  return out;
}

/** A histogram's cumulative buckets: `[upper bound (s), count]`, ascending, `+Inf` last. */
export type Buckets = [number, number][];

export function histogramBuckets(text: string, name: string): Buckets {
  const out: Buckets = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}_bucket{`)) continue;
    const le = labelsOf(line).le;
    if (le === undefined) continue;
    out.push([le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le), seriesValue(line)]);
  }
  return out.sort((a, b) => a[0] - b[0]);
}

/**
 * The `q` quantile (0..1) of what was observed between two scrapes, as the upper bound of the
 * bucket it falls in (so "≤ this"), or null when nothing was observed.
 */
export function bucketQuantile(before: Buckets, after: Buckets, q: number): number | null {
  const counts = after.map(([le, n]) => [le, n - (before.find((b) => b[0] === le)?.[1] ?? 0)] as const);
  const total = counts.at(-1)?.[1] ?? 0;
  if (total <= 0) return null;
  const rank = Math.ceil(q * total);
  for (const [le, n] of counts) if (n >= rank) return le;
  return null;
}
