/**
 * The last bytes a child wrote (stdout and stderr interleaved as they came), bounded: 64 KiB by
 * default. Its tail goes with a terminate's acknowledgement and a fatal report (the last log lines),
 * and its complete lines feed the program's progress regex.
 */

export const DEFAULT_OUTPUT_BYTES = 64 * 1024;
/** The longest partial line kept while waiting for its end (a line longer is cut there). */
const MAX_LINE_BYTES = 16 * 1024;

export class OutputRing {
  private chunks: Buffer[] = [];
  private size = 0;
  private partial = '';

  constructor(private readonly capacityBytes = DEFAULT_OUTPUT_BYTES) {}

  /** Keep `chunk`; returns the lines it completed (without their newline). */
  push(chunk: Buffer): string[] {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.capacityBytes && this.chunks.length > 0) {
      const first = this.chunks[0]!;
      const excess = this.size - this.capacityBytes;
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.size -= excess;
      }
    }
    const text = this.partial + chunk.toString('utf8');
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    if (this.partial.length > MAX_LINE_BYTES) {
      lines.push(this.partial);
      this.partial = '';
    }
    return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  }

  /** Bytes held now (at most the capacity). */
  get bytes(): number {
    return this.size;
  }

  /** The last `maxChars` characters, starting at a line boundary when one is in reach. */
  tail(maxChars: number): string {
    const all = Buffer.concat(this.chunks).toString('utf8');
    if (all.length <= maxChars) return all;
    const cut = all.slice(all.length - maxChars);
    const nl = cut.indexOf('\n');
    return nl >= 0 && nl < cut.length - 1 ? cut.slice(nl + 1) : cut;
  }
}
