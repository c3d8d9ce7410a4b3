/**
 * What the dashboard's pages read, shared between them. The stream flushes every page at once, so
 * the pages that show the same thing ask for it together: the first computes it, the others take its
 * answer. An answer is reused
 * - as long as no event arrived since it was computed (nothing it shows can have changed), or else
 * - for `minMs`, and for `costFactor` times what it cost to compute when that is longer: an answer
 *   that scans the store (the overview's counts) is computed at most once every `costFactor` times
 *   its cost, so the pages cost the coordinator at most 1/`costFactor` of its time however many are
 *   open and however busy it is.
 * While no page is open nothing is shared (`seq` is NaN: nothing is listened to). An answer older than
 * the newest event is marked stale: the route tells the page when a fresh one
 * will be computed (`x-rouse-refresh-in`), and the page asks again then, so its last refresh after a
 * burst always shows the end of it.
 */

export interface ShareOptions {
  /** Reuse an answer at least this long (ms) even when events arrived since. */
  minMs: number;
  /** ...and this many times what it cost to compute, when that is longer. */
  costFactor: number;
}

interface Entry {
  /** The event count when its computation began. */
  seq: number;
  at: number;
  keepMs: number;
  value: Promise<unknown>;
}

/** At most this many answers are kept (pages × distinct filters); past it the oldest go. */
/** Lists (an index read of a page): shared by the pages that ask within the same window. */
export const LIST_SHARE: ShareOptions = { minMs: 250, costFactor: 10 };

const MAX_ENTRIES = 256;

export class SharedReads {
  private readonly entries = new Map<string, Entry>();

  /**
   * @param seq the number of events seen so far (the browser streams' count)
   * @param now the coordinator's clock
   */
  constructor(
    private readonly seq: () => number,
    private readonly now: () => number,
  ) {}

  /**
   * The answer for `key`, computed by `load` or shared; `staleMs` is 0 when no event arrived since it
   * was computed, else how long (ms) until asking again computes a fresh one.
   */
  read<T>(
    key: string,
    options: ShareOptions,
    load: () => Promise<T>,
  ): { value: Promise<T>; staleMs: number } {
    const now = this.now();
    const seq = this.seq();
    // No page is open (the streams listen to nothing): there are no pages to share with, and no
    // events to vouch for an answer. Compute it.
    if (Number.isNaN(seq)) return { value: load(), staleMs: 0 };
    const hit = this.entries.get(key);
    if (hit !== undefined && now >= hit.at) {
      if (hit.seq === seq) return { value: hit.value as Promise<T>, staleMs: 0 };
      const age = now - hit.at;
      if (age < hit.keepMs) return { value: hit.value as Promise<T>, staleMs: Math.max(1, hit.keepMs - age) };
    }
    const value = load();
    const entry: Entry = { seq, at: now, keepMs: options.minMs, value };
    this.entries.delete(key);
    if (this.entries.size >= MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, entry);
    value.then(
      () => {
        entry.keepMs = Math.max(options.minMs, options.costFactor * (this.now() - now));
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    return { value, staleMs: 0 };
  }
}
