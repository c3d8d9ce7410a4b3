/**
 * What the relays publish to the other coordinators (claimable types, stream refs), batched: items
 * added during one event-loop turn go out in one publish, with at most one publish in flight (what
 * piles up meanwhile goes in the next), so thousands of changes a second are not thousands of
 * `NOTIFY`s. A failed publish is reported once until one succeeds again; its items are not retried
 * (notices are wake-ups and live-feed entries, never state).
 */
export interface NoticeBatcher<T> {
  add(item: T): void;
  /** Drop what is pending; later items are ignored. */
  stop(): void;
}

export function createNoticeBatcher<T>(deps: {
  /** Publish one batch: the items added since the last one, in order. */
  publish(batch: T[]): Promise<void>;
  /** A publish failed (called once until a publish succeeds again). */
  onFailure(err: unknown, batch: T[]): void;
  /** Equal items added within one batch go out once. @default false */
  unique?: boolean;
}): NoticeBatcher<T> {
  let pending: T[] = [];
  const seen = new Set<T>();
  let scheduled = false;
  let publishing = false;
  let stopped = false;
  let failing = false;

  function schedule(): void {
    scheduled = true;
    // A scheduling boundary (coalesce one event-loop turn), not domain time: no clock involved.
    setImmediate(flush);
  }

  function flush(): void {
    scheduled = false;
    if (stopped || pending.length === 0) return;
    const batch = pending;
    pending = [];
    seen.clear();
    publishing = true;
    deps
      .publish(batch)
      .then(
        () => {
          failing = false;
        },
        (err: unknown) => {
          if (!failing) deps.onFailure(err, batch);
          failing = true;
        },
      )
      .finally(() => {
        publishing = false;
        if (pending.length > 0 && !scheduled) schedule();
      });
  }

  return {
    add(item) {
      if (stopped) return;
      if (deps.unique === true) {
        if (seen.has(item)) return;
        seen.add(item);
      }
      pending.push(item);
      if (!scheduled && !publishing) schedule();
    },
    stop() {
      stopped = true;
      pending = [];
      seen.clear();
    },
  };
}
