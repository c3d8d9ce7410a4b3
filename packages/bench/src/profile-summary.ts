/**
 * Summarises a V8 CPU profile (`node --cpu-prof`) of the coordinator: self time by package/file and
 * by function, optionally only inside a window of the measured phase. V8 stamps samples with the
 * monotonic clock (CLOCK_MONOTONIC on Linux), the same clock as `process.hrtime`, so a workload can
 * record its window with {@link monotonicUs} in the parent and cut the child's profile to it.
 */
import { readFileSync } from 'node:fs';
import { round } from './stats.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileWindow {
  fromUs: number;
  toUs: number;
}

export interface ProfileSummary {
  file: string;
  /** The window summarised (monotonic µs), to cut the same profile again with other tools. */
  window: ProfileWindow | null;
  /** Sampled time inside the window, ms. */
  sampledMs: number;
  /** Share of the window the process was idle (waiting for I/O), %. */
  idlePercent: number;
  /** Self time by package (`node_modules` name), our file, or a V8/Node category; % of the window. */
  byFile: { name: string; percent: number }[];
  byFunction: { name: string; percent: number }[];
}

/** Now on the monotonic clock, in microseconds (comparable with CPU profile timestamps). */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

function fileLabel(url: string, functionName: string): string {
  if (!url) return `(${functionName || 'native'})`;
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  const ours = /\/packages\/(.*)$/.exec(url);
  if (ours) return ours[1]!.replace('/dist/', '/');
  return url.replace(/^file:\/\//, '');
}

export function summarizeProfile(file: string, window?: ProfileWindow, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  let t = profile.startTime;
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    if (window && (t < window.fromUs || t > window.toUs)) continue;
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
    total += delta;
  }
  const byFile = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let idle = 0;
  for (const [id, us] of selfUs) {
    const frame = nodes.get(id)!.callFrame;
    if (frame.functionName === '(idle)') idle += us;
    const label = fileLabel(frame.url, frame.functionName);
    byFile.set(label, (byFile.get(label) ?? 0) + us);
    const fn = frame.url ? `${frame.functionName || '(anonymous)'} ${label}:${frame.lineNumber + 1}` : label;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  }
  const ranked = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, percent: total > 0 ? round((100 * us) / total, 1) : 0 }));
  return {
    file,
    window: window ?? null,
    sampledMs: round(total / 1000, 0),
    idlePercent: total > 0 ? round((100 * idle) / total, 1) : 0,
    byFile: ranked(byFile),
    byFunction: ranked(byFunction),
  };
}

/** A few lines for the console. */
export function formatProfileSummary(title: string, s: ProfileSummary, lines = 12): string {
  const out = [
    `${title}: ${s.sampledMs} ms sampled, ${s.idlePercent}% idle (${s.file})`,
    '  self time by file:',
  ];
  for (const e of s.byFile.slice(0, lines)) out.push(`    ${String(e.percent).padStart(5)}%  ${e.name}`);
  out.push('  self time by function:');
  for (const e of s.byFunction.slice(0, lines)) out.push(`    ${String(e.percent).padStart(5)}%  ${e.name}`);
  return out.join('\n');
}
