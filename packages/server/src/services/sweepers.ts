/**
 * Where the coordinator keeps blobs, and its periodic clean-ups: blobs nothing refers to any more,
 * expired effect keys, expired agent snapshots. Each sweep runs on its own timer between `start()`
 * and `stop()`, and can be run at once (the `sweep*Now` hooks of the coordinator).
 */
import type { Logger } from 'pino';
import type { BlobStore } from '../store/blobs.js';
import { type BlobSweepResult, ownerOfBlobKey } from '../store/blobs.js';
import type { Store } from '../store/store.js';
import { createSnapshotSweeper } from './agent-snapshots.js';
import { createFileBlobStore } from './blob-store.js';
import { createBlobSweeper } from './blob-sweeper.js';
import type { CoordinatorContext } from './coordinator-context.js';
import type { ResolvedCoordinatorOptions } from './coordinator-options.js';
import { createEffectSweeper } from './effect-keys.js';

/**
 * The blob store: a shared store keeps blobs itself (any coordinator reads any upload); else files
 * in the data dir. A blob is a task's result, a task blob or an agent snapshot's base, named
 * `<owner id>/...`: the file store's sweep asks the store whether its owner still refers to it.
 */
export function createBlobs(store: Store, o: ResolvedCoordinatorOptions): BlobStore {
  return (
    store.createBlobStore?.({ maxBytes: o.maxResultBytes }) ??
    createFileBlobStore({
      dir: o.blobDir,
      maxBytes: o.maxResultBytes,
      sweep: {
        isReferenced: async (key) => {
          const owner = ownerOfBlobKey(key);
          return (
            (await store.getTask(owner))?.resultRef?.key === key ||
            (await store.getSnapshot(owner))?.baseRef?.key === key ||
            (await store.isTaskBlobKey(key))
          );
        },
        now: () => o.clock.now(),
      },
    })
  );
}

export interface Sweepers {
  start(): void;
  stop(): void;
  /** Null when the blob store does not sweep. */
  sweepBlobs(): Promise<BlobSweepResult | null>;
  /** How many expired effect keys were deleted. */
  sweepEffects(): Promise<number>;
  /** How many expired snapshots were deleted. */
  sweepSnapshots(): Promise<number>;
}

export function createSweepers(ctx: CoordinatorContext, part: (component: string) => Logger): Sweepers {
  const { store, blobs, clock, options: o } = ctx;
  const sweepers = {
    blobs: createBlobSweeper({
      blobs,
      clock,
      logger: part('blobs'),
      intervalMs: o.blobSweepIntervalMs,
      olderThanMs: o.blobOrphanAgeMs,
    }),
    effects: createEffectSweeper({
      store,
      clock,
      logger: part('effects'),
      intervalMs: o.effectSweepIntervalMs,
    }),
    snapshots: createSnapshotSweeper({
      store,
      blobs,
      clock,
      logger: part('snapshots'),
      intervalMs: o.snapshotSweepIntervalMs,
    }),
  };
  const all = Object.values(sweepers);
  return {
    start: () => {
      for (const s of all) s.start();
    },
    stop: () => {
      for (const s of all) s.stop();
    },
    sweepBlobs: () => sweepers.blobs.sweep(),
    sweepEffects: () => sweepers.effects.sweep(),
    sweepSnapshots: () => sweepers.snapshots.sweep(),
  };
}
