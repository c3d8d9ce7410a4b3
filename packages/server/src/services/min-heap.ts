/** A binary min-heap ordered by `at` (ties by insertion order). Used for lease and wake deadlines. */
export interface HeapItem {
  at: number;
  seq: number;
}

export class MinHeap<T extends HeapItem> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!less(a[i]!, a[parent]!)) break;
      [a[i], a[parent]] = [a[parent]!, a[i]!];
      i = parent;
    }
  }

  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && less(a[l]!, a[m]!)) m = l;
        if (r < a.length && less(a[r]!, a[m]!)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }

  /** Keep only the items `keep` accepts and restore heap order: O(n). */
  filter(keep: (item: T) => boolean): void {
    const kept = this.items.filter(keep);
    this.items.length = 0;
    kept.sort((x, y) => (less(x, y) ? -1 : 1));
    for (const item of kept) this.items.push(item);
  }

  clear(): void {
    this.items.length = 0;
  }
}

function less(x: HeapItem, y: HeapItem): boolean {
  return x.at < y.at || (x.at === y.at && x.seq < y.seq);
}
