/**
 * The bench report: a table for humans (workload | metric | value | target | peer | ok?) and a JSON
 * file per run in `bench-results/<timestamp>.json`, copied to `bench-results/latest.json`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { round } from './stats.js';
import { type Metric, meetsTarget, type WorkloadResult } from './workload.js';

export interface BenchReport {
  startedAt: string;
  finishedAt: string;
  quick: boolean;
  store: string;
  workerMode: string;
  environment: {
    node: string;
    platform: string;
    cpus: number;
    cpuModel: string;
    totalMemoryBytes: number;
    loadAverageAtStart: number[];
    gitCommit: string | null;
  };
  results: (WorkloadResult & { metrics: (Metric & { ok: boolean | null })[] })[];
  /** Where the coordinator CPU profiles were written (with `--cpu-prof`). */
  cpuProfileDir?: string;
}

export function environment(): BenchReport['environment'] {
  let gitCommit: string | null = null;
  try {
    gitCommit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    // not a git checkout
  }
  return {
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    totalMemoryBytes: os.totalmem(),
    loadAverageAtStart: os.loadavg().map((l) => round(l, 2)),
    gitCommit,
  };
}

export function withVerdicts(results: WorkloadResult[]): BenchReport['results'] {
  return results.map((r) => ({ ...r, metrics: r.metrics.map((m) => ({ ...m, ok: meetsTarget(m) })) }));
}

/** Write `<dir>/<timestamp>.json` and `<dir>/latest.json`; returns the timestamped path. */
export function writeReport(dir: string, report: BenchReport): string {
  const outDir = resolve(dir);
  mkdirSync(outDir, { recursive: true });
  const stamp = report.startedAt.replace(/[:.]/g, '-');
  const file = join(outDir, `${stamp}.json`);
  const text = `${JSON.stringify(report, null, 2)}\n`;
  writeFileSync(file, text);
  writeFileSync(join(outDir, 'latest.json'), text);
  return file;
}

export function formatValue(value: number | null, unit: string): string {
  if (value === null || !Number.isFinite(value)) return 'n/a';
  if (unit === 'bytes') return `${round(value / (1024 * 1024), 1)} MiB`;
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  const n = round(value, digits).toLocaleString('en-US', { maximumFractionDigits: digits });
  return unit ? `${n} ${unit}` : n;
}

function formatTarget(m: Metric): string {
  if (!m.target) return '';
  return `${m.target.op === '>=' ? '≥' : '≤'} ${formatValue(m.target.value, m.unit)}`;
}

function formatPeer(m: Metric): string {
  return m.peer ?? '';
}

/** The human table, one row per metric; errors follow the table. */
export function formatTable(report: BenchReport): string {
  const header = ['workload', 'metric', 'value', 'target', 'peer', 'ok?'];
  const rows: string[][] = [];
  for (const r of report.results) {
    for (const m of r.metrics) {
      const ok = m.ok === null ? '' : m.ok ? 'yes' : 'NO';
      rows.push([m.workload, m.metric, formatValue(m.value, m.unit), formatTarget(m), formatPeer(m), ok]);
    }
    if (r.error && r.metrics.length === 0) rows.push([r.workload, 'error', 'see below', '', '', 'NO']);
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i === 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join(' | ')
      .trimEnd();
  const out = [
    `Rouse bench — store ${report.store}, worker ${report.workerMode}${report.quick ? ', quick' : ''}, node ${report.environment.node}, ${report.environment.cpus} CPUs (load at start ${report.environment.loadAverageAtStart.join(' ')})`,
    '',
    line(header),
    widths.map((w) => '-'.repeat(w)).join('-|-'),
    ...rows.map(line),
  ];
  for (const r of report.results) if (r.error) out.push('', `${r.workload} failed: ${r.error}`);
  return out.join('\n');
}
