/**
 * Per agent type baselines (docs/design.md §6.2): every iteration time
 * agents report is added to this coordinator's histogram for their type; every `flushMs` the
 * histograms go to the store (one row per coordinator, type and metric) and every coordinator's are
 * read back and merged, so the detectors compare an agent with what its whole type does, whichever
 * coordinator its heartbeats reached, and a restart keeps what was learned.
 */
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../../core/clock.js';
import {
  type BaselineView,
  baselineView,
  LogHistogram,
  mergeHistograms,
} from '../../core/watchdog/baseline.js';
import type { Store } from '../../store/store.js';

export const ITERATION_METRIC = 'iteration_ms';
export type { BaselineView };

export interface Baselines {
  /** An agent of `agentType` reported an iteration of `ms`. */
  addIteration(agentType: string, ms: number): void;
  /** The merged iteration baseline of the type, or null before anything was learned. */
  iteration(agentType: string): BaselineView | null;
  /** Save this coordinator's histograms and read everyone's (also runs every `flushMs`). */
  flush(): Promise<void>;
  start(): void;
  stop(): Promise<void>;
}

export function createBaselines(deps: {
  store: Store;
  clock: Clock;
  logger: Logger;
  coordinatorId: () => string;
  flushMs: number;
}): Baselines {
  const own = new Map<string, LogHistogram>();
  const dirty = new Set<string>();
  let merged = new Map<string, BaselineView>();
  let timer: TimerHandle | null = null;
  let stopped = true;

  async function flush(): Promise<void> {
    const types = [...dirty];
    dirty.clear();
    if (types.length > 0) {
      await deps.store.saveBaselines(
        types.map((agentType) => ({
          agentType,
          metric: ITERATION_METRIC,
          coordinatorId: deps.coordinatorId(),
          histogram: own.get(agentType)!.toJSON(),
        })),
      );
    }
    const byType = new Map<string, LogHistogram>();
    for (const b of await deps.store.listBaselines()) {
      if (b.metric !== ITERATION_METRIC) continue;
      const h = LogHistogram.fromJSON(b.histogram);
      if (h === null) continue; // a row no build of ours wrote
      const acc = byType.get(b.agentType);
      byType.set(b.agentType, acc === undefined ? h : mergeHistograms(acc, h));
    }
    merged = new Map();
    for (const [type, h] of byType) {
      const view = baselineView(h);
      if (view !== null) merged.set(type, view);
    }
  }

  function schedule(): void {
    if (stopped) return;
    timer = deps.clock.setTimer(deps.flushMs, () => {
      flush()
        .catch((err: unknown) => {
          const down = (err as { code?: unknown }).code === 'unavailable';
          deps.logger[down ? 'debug' : 'warn']({ err }, 'could not save or read the baselines');
        })
        .finally(schedule);
    });
  }

  return {
    addIteration(agentType, ms) {
      let h = own.get(agentType);
      if (h === undefined) {
        h = new LogHistogram();
        own.set(agentType, h);
      }
      h.add(ms);
      dirty.add(agentType);
    },
    iteration: (agentType) => merged.get(agentType) ?? null,
    flush,
    start() {
      if (!stopped) return;
      stopped = false;
      schedule();
    },
    async stop() {
      stopped = true;
      timer?.cancel();
      timer = null;
      if (dirty.size > 0) await flush().catch(() => undefined);
    },
  };
}
