/**
 * Keeping a supervisor's heartbeat under the coordinator's body limit (64 KiB): its children's entries
 * in groups sent as several requests, and acknowledgements and fatal reports (which carry output)
 * taken a bounded batch at a time.
 */
import type { SupervisedChild } from '@rouse/protocol';

/** The first items of `list` (at least one, if any) whose JSON stays under `maxBytes`, at most `max`. */
export function takeWithin<T>(list: readonly T[], max: number, maxBytes: number): T[] {
  const out: T[] = [];
  let bytes = 0;
  for (const item of list) {
    const b = Buffer.byteLength(JSON.stringify(item)) + 1;
    if (out.length >= max || (out.length > 0 && bytes + b > maxBytes)) break;
    out.push(item);
    bytes += b;
  }
  return out;
}

/** Children's entries in groups whose JSON stays under `maxBytes` (at least one group). */
export function splitChildren(children: SupervisedChild[], maxBytes: number): SupervisedChild[][] {
  const groups: SupervisedChild[][] = [[]];
  // `[` and `]`, then each entry and the comma before the next (UTF-8 bytes).
  let size = 2;
  for (const c of children) {
    const bytes = Buffer.byteLength(JSON.stringify(c)) + 1;
    if (size + bytes - 1 > maxBytes && groups.at(-1)!.length > 0) {
      groups.push([]);
      size = 2;
    }
    groups.at(-1)!.push(c);
    size += bytes;
  }
  return groups;
}
