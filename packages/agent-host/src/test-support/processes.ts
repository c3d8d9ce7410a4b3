/** Test helpers about real processes (Linux /proc). Not built: the package excludes `src/test-support/`. */
import { readFileSync } from 'node:fs';

/** True while `pid` is a live process (not gone, not a zombie waiting to be reaped). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}
