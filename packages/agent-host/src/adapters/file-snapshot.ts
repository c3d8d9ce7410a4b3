/**
 * The files a task changed in its working directory: a snapshot of (path, size, mtime) before the
 * run and after, compared. Bounded: at most `maxEntries` files are looked at, `.git` and
 * `node_modules` are skipped, and at most `maxChanged` paths are reported.
 */
import { readdir, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';

export type FileSnapshot = Map<string, string>;

const SKIP = new Set(['.git', 'node_modules']);

export async function snapshotFiles(root: string, maxEntries = 20_000): Promise<FileSnapshot> {
  const out: FileSnapshot = new Map();
  const dirs = [root];
  while (dirs.length > 0 && out.size < maxEntries) {
    const dir = dirs.pop()!;
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (out.size >= maxEntries) break;
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (!SKIP.has(e.name)) dirs.push(path);
      } else {
        try {
          const s = await stat(path);
          out.set(relative(root, path), `${s.size}:${s.mtimeMs}`);
        } catch {
          // gone meanwhile
        }
      }
    }
  }
  return out;
}

/** Paths added, changed or removed between two snapshots, sorted (pure). */
export function changedFiles(before: FileSnapshot, after: FileSnapshot, maxChanged = 1000): string[] {
  const changed = new Set<string>();
  for (const [path, sig] of after) if (before.get(path) !== sig) changed.add(path);
  for (const path of before.keys()) if (!after.has(path)) changed.add(path);
  return [...changed].sort().slice(0, maxChanged);
}
