/**
 * V8 heap settings for the long-lived `rouse serve` process.
 *
 * V8's defaults suit programs that allocate in bursts: under sustained allocation the young
 * generation grows to 32 MB, and the old generation is let grow to several times what survives a
 * full collection before the next one. A coordinator keeps its state in the store, so its live
 * heap is small (about 20 MB under load) and its allocation steady and short-lived (one request's
 * objects). With the defaults, about 60 MB of its heap is garbage waiting for a collection.
 *
 * So `rouse serve`, from its start:
 * - starts a full collection once the old generation has grown 20% past its last live size
 *   (`--heap-growing-percent=20`);
 * - caps the young generation at `YOUNG_GENERATION_CAP_BYTES` (8 MB, 16 MB on PostgreSQL). V8
 *   fixes its maximum when the process starts (`--max-semi-space-size`, which only node's command
 *   line can set), but reads its growth factor each time it grows it: after every collection the
 *   cap sets that factor to 1 (no growth) once the young generation has reached the cap, and back
 *   to V8's 2 when V8 has shrunk it below (it does when the process idles).
 *
 * Creating a worker thread resets the growth factor V8-wide; whoever starts one sets the flags again
 * once it is up (`reapplyV8Flags` in v8-flags.ts).
 *
 * A flag the user gave node (`node --heap-growing-percent=50 …`, `NODE_OPTIONS=--max-semi-space-size=8`)
 * wins over the matching setting here; `ROUSE_HEAP=node` keeps all of V8's defaults
 * (`ROUSE_HEAP=lean`, the default, applies them).
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { setV8Flag } from '../v8-flags.js';
import { CliError, EXIT } from './context.js';

/** The old generation's growth past its live size before a full collection, in percent. */
export const HEAP_GROWING_PERCENT = 20;

/**
 * The young generation's cap by store, as V8 reports its size (`new_space` in
 * `v8.getHeapSpaceStatistics()`: 1 MB at start, 32 MB at most by default). On PostgreSQL the
 * coordinator allocates more per task (the driver's messages and rows), and 8 MB made it collect
 * twice as often: 16 MB cost about 9 MB more and saved 8–13 % of its CPU in W2 and batched creates.
 */
export const YOUNG_GENERATION_CAP_BYTES = { sqlite: 8 * 1024 * 1024, postgres: 16 * 1024 * 1024 } as const;

/** Which store the coordinator runs on (the young generation's cap depends on it). */
export type HeapStore = keyof typeof YOUNG_GENERATION_CAP_BYTES;

/** V8's own semi-space growth factor. */
const V8_GROWTH_FACTOR = 2;

/** Flags that size the young generation themselves: given one, its growth is the user's call too. */
const YOUNG_GENERATION_FLAGS = ['max-semi-space-size', 'min-semi-space-size', 'semi-space-growth-factor'];

/** What to set; null where V8 keeps its own behaviour (also what `rouse serve` logs at start). */
export interface LeanHeapPlan {
  /** `--heap-growing-percent`. */
  oldGenerationGrowthPercent: number | null;
  /** The young generation's cap (see `capYoungGeneration`). */
  youngGenerationCapBytes: number | null;
}

/** The names of the V8/node flags in `args` (`--max_semi_space_size=4` → `max-semi-space-size`). */
function flagNames(args: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const arg of args) {
    const m = /^--([a-z0-9_-]+)/i.exec(arg);
    if (m?.[1]) names.add(m[1].toLowerCase().replaceAll('_', '-'));
  }
  return names;
}

/**
 * What to set: the lean settings the user has not made through node's command line (`execArgv`)
 * or `NODE_OPTIONS`; nothing when `ROUSE_HEAP=node`. Another value of `ROUSE_HEAP` is a usage error.
 */
export function leanHeapPlan(
  execArgv: readonly string[],
  env: Record<string, string | undefined>,
  store: HeapStore = 'sqlite',
): LeanHeapPlan {
  const mode = env.ROUSE_HEAP ?? 'lean';
  if (mode !== 'lean' && mode !== 'node') {
    throw new CliError(
      `ROUSE_HEAP must be lean (V8 heap settings for a long-lived server, the default) or node (V8's own defaults), not ${JSON.stringify(mode)}`,
      EXIT.usage,
    );
  }
  if (mode === 'node') return { oldGenerationGrowthPercent: null, youngGenerationCapBytes: null };
  const given = flagNames([...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)]);
  return {
    oldGenerationGrowthPercent: given.has('heap-growing-percent') ? null : HEAP_GROWING_PERCENT,
    youngGenerationCapBytes: YOUNG_GENERATION_FLAGS.some((f) => given.has(f))
      ? null
      : YOUNG_GENERATION_CAP_BYTES[store],
  };
}

/** The young generation's size as V8 reports it. */
function youngGenerationBytes(): number {
  return getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}

/**
 * Keep the young generation at or under `capBytes` for the rest of the process (one doubling past
 * it at most, if V8 grows it twice between two collections' notifications).
 */
export function capYoungGeneration(capBytes: number): void {
  let factor = 0;
  const check = () => {
    const next = youngGenerationBytes() >= capBytes ? 1 : V8_GROWTH_FACTOR;
    if (next === factor) return;
    setV8Flag('semi-space-growth-factor', next);
    factor = next;
  };
  check();
  new PerformanceObserver(check).observe({ entryTypes: ['gc'] });
}

/** Apply `leanHeapPlan` to this process, for the rest of its life. */
export function applyLeanHeap(
  execArgv: readonly string[],
  env: Record<string, string | undefined>,
  store: HeapStore = 'sqlite',
): LeanHeapPlan {
  const plan = leanHeapPlan(execArgv, env, store);
  if (plan.oldGenerationGrowthPercent !== null) {
    setV8Flag('heap-growing-percent', plan.oldGenerationGrowthPercent);
  }
  if (plan.youngGenerationCapBytes !== null) capYoungGeneration(plan.youngGenerationCapBytes);
  return plan;
}
