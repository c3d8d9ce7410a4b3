import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CliError } from './context.js';
import { HEAP_GROWING_PERCENT, leanHeapPlan, YOUNG_GENERATION_CAP_BYTES } from './heap-tuning.js';

const LEAN = {
  oldGenerationGrowthPercent: HEAP_GROWING_PERCENT,
  youngGenerationCapBytes: YOUNG_GENERATION_CAP_BYTES.sqlite,
};
const OLD_ONLY = { oldGenerationGrowthPercent: HEAP_GROWING_PERCENT, youngGenerationCapBytes: null };
const YOUNG_ONLY = {
  oldGenerationGrowthPercent: null,
  youngGenerationCapBytes: YOUNG_GENERATION_CAP_BYTES.sqlite,
};

describe('leanHeapPlan', () => {
  it('sets the old generation growth and caps the young generation by default, and with ROUSE_HEAP=lean', () => {
    expect(leanHeapPlan([], {})).toEqual(LEAN);
    expect(leanHeapPlan(['--enable-source-maps'], { ROUSE_HEAP: 'lean' })).toEqual(LEAN);
  });

  it('gives a PostgreSQL coordinator a young generation twice as large', () => {
    expect(YOUNG_GENERATION_CAP_BYTES.postgres).toBe(2 * YOUNG_GENERATION_CAP_BYTES.sqlite);
    expect(leanHeapPlan([], {}, 'postgres')).toEqual({
      ...LEAN,
      youngGenerationCapBytes: YOUNG_GENERATION_CAP_BYTES.postgres,
    });
    expect(leanHeapPlan(['--max-semi-space-size=4'], {}, 'postgres')).toEqual(OLD_ONLY);
    expect(leanHeapPlan([], { ROUSE_HEAP: 'node' }, 'postgres').youngGenerationCapBytes).toBeNull();
  });

  it('does nothing with ROUSE_HEAP=node', () => {
    expect(leanHeapPlan([], { ROUSE_HEAP: 'node' })).toEqual({
      oldGenerationGrowthPercent: null,
      youngGenerationCapBytes: null,
    });
  });

  it('refuses another ROUSE_HEAP value with a usage error', () => {
    expect(() => leanHeapPlan([], { ROUSE_HEAP: 'small' })).toThrow(CliError);
    expect(() => leanHeapPlan([], { ROUSE_HEAP: 'small' })).toThrow(/ROUSE_HEAP must be lean .* or node/);
  });

  it('leaves the old generation to a growth the user gave node, in either spelling', () => {
    expect(leanHeapPlan(['--heap-growing-percent=50'], {})).toEqual(YOUNG_ONLY);
    expect(leanHeapPlan(['--heap_growing_percent', '50'], {})).toEqual(YOUNG_ONLY);
  });

  it('leaves the young generation alone when the user sized it, on the command line or in NODE_OPTIONS', () => {
    for (const [execArgv, nodeOptions] of [
      [[], ' --max_semi_space_size=8 '],
      [['--min-semi-space-size=4'], undefined],
      [[], '--semi-space-growth-factor=4'],
    ] as const) {
      expect(leanHeapPlan(execArgv, { NODE_OPTIONS: nodeOptions })).toEqual(OLD_ONLY);
    }
    // an unrelated heap flag changes nothing
    expect(leanHeapPlan(['--max-old-space-size=512'], {})).toEqual(LEAN);
  });
});

/**
 * The settings must work when made at run time, since `rouse serve` cannot choose node's command
 * line. A child node loads the built module, applies the plan (or not), then allocates steadily,
 * keeping 2% of what it allocates for a while (a server's pattern), and reports the largest its
 * young generation and old space grew.
 */
describe('applyLeanHeap in a real node process', () => {
  const dist = new URL('../../dist/', import.meta.url).href;
  // With a third argument (a directory), a SQLite store opens there once the young generation has
  // reached its cap: its checkpoint thread's isolate resets V8's growth factor on creation.
  const program = `
    import v8 from 'node:v8';
    const { applyLeanHeap } = await import(process.argv[1] + 'cli/heap-tuning.js');
    applyLeanHeap([], { ROUSE_HEAP: process.argv[2] });
    const keep = []; const peak = {}; let store;
    for (let round = 0; round < 300; round++) {
      if (round === 60 && process.argv[3]) {
        const { createSqliteStore } = await import(process.argv[1] + 'store/sqlite/sqlite-store.js');
        const { systemClock } = await import(process.argv[1] + 'system-clock.js');
        store = createSqliteStore({ path: process.argv[3] + '/rouse.db', clock: systemClock() });
      }
      for (let i = 0; i < 20000; i++) { const o = { a: i, b: 'x' + i, c: [i, i + 1] }; if (i % 50 === 0) keep.push(o); }
      if (keep.length > 40000) keep.splice(0, 20000);
      for (const s of v8.getHeapSpaceStatistics()) peak[s.space_name] = Math.max(peak[s.space_name] ?? 0, s.space_size);
      await new Promise((r) => setImmediate(r));
    }
    await store?.close();
    process.stdout.write(JSON.stringify({ young: peak.new_space, old: peak.old_space }));`;
  const peaks = (mode: 'lean' | 'node', storeDir?: string) => {
    const args = ['--input-type=module', '-e', program, dist, mode, ...(storeDir ? [storeDir] : [])];
    const r = spawnSync(process.execPath, args, {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as { young: number; old: number };
  };

  it('keeps the young generation at its cap, where V8 alone grows it past', () => {
    expect(fileURLToPath(dist)).toMatch(/server\/dist\/$/);
    const lean = peaks('lean');
    const defaults = peaks('node');
    expect(defaults.young).toBeGreaterThan(2 * YOUNG_GENERATION_CAP_BYTES.sqlite);
    // one doubling past the cap at most; in practice exactly the cap
    expect(lean.young).toBeLessThanOrEqual(2 * YOUNG_GENERATION_CAP_BYTES.sqlite);
    expect(lean.young).toBeGreaterThanOrEqual(YOUNG_GENERATION_CAP_BYTES.sqlite / 2);
  }, 60_000);

  it('keeps the cap when a worker thread starts later (the SQLite checkpoint thread)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rouse-heap-'));
    try {
      expect(peaks('lean', dir).young).toBeLessThanOrEqual(2 * YOUNG_GENERATION_CAP_BYTES.sqlite);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
