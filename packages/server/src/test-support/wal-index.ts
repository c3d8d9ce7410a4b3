import { readFileSync } from 'node:fs';

/**
 * Frames in a SQLite WAL and frames already copied into the database file, read from the WAL index
 * header (the -shm file: `mxFrame` at byte 16, the checkpoint's `nBackfill` at byte 96, native byte
 * order; https://sqlite.org/walformat.html). A checkpoint lets the next commit start the WAL over.
 */
export function walIndex(path: string): { frames: number; copied: number } {
  const shm = readFileSync(`${path}-shm`);
  return { frames: shm.readUInt32LE(16), copied: shm.readUInt32LE(96) };
}
