/**
 * Housekeeping of result blobs: every `intervalMs`, the blob store forgets what nothing can read any
 * more (`BlobStore.sweep`: uploads that never finished, blobs no task refers to), once older than
 * `olderThanMs`. Every coordinator of a deployment sweeps; each deletion is conditional, so two
 * sweeps at once are harmless. A blob store without `sweep` is left alone.
 */
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import type { BlobStore, BlobSweepResult } from '../store/blobs.js';
import { every } from './periodic.js';

export interface BlobSweeper {
  start(): void;
  stop(): void;
  /** One sweep now (also what the timer runs); null when the blob store does not sweep. */
  sweep(): Promise<BlobSweepResult | null>;
}

export function createBlobSweeper(deps: {
  blobs: BlobStore;
  clock: Clock;
  logger: Logger;
  intervalMs: number;
  olderThanMs: number;
}): BlobSweeper {
  const { blobs, clock, logger, intervalMs, olderThanMs } = deps;

  const sweep = async (): Promise<BlobSweepResult | null> => {
    if (blobs.sweep === undefined) return null;
    const swept = await blobs.sweep({ olderThanMs });
    if (swept.blobs > 0 || swept.unfinishedUploads > 0)
      logger.info(swept, 'swept result blobs nothing refers to any more');
    return swept;
  };
  const loop = every(clock, intervalMs, sweep, (err) =>
    logger.warn({ err }, 'result blob sweep failed; trying again next time'),
  );

  return {
    start() {
      if (blobs.sweep !== undefined) loop.start();
    },
    stop: () => loop.stop(),
    sweep,
  };
}
