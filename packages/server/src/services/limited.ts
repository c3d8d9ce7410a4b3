/**
 * Work over many items with a bound on how much of it is in flight: a sweep that started one store
 * round trip per item at once would take every pooled connection (PostgreSQL) and make everything
 * else — heartbeats, detector re-checks — wait behind it.
 */

/**
 * Store calls one piece of background work keeps in flight: a recovery sweep's ladders, a relayed
 * notice's reads by id, a failed batch's writes one by one, and within one supervisor heartbeat its
 * children's evaluations and its acknowledgements. Under half of PostgreSQL's default pool of 10, so
 * that requests, heartbeats and detector re-checks always find a connection.
 */
export const BACKGROUND_STORE_CALLS = 4;

/**
 * Run `fn` for each item, at most `limit` at a time, in order of the items; resolves when all are
 * done. A rejection rejects the whole (items already started run on; no new ones start).
 */
export async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  let failed = false;
  const lane = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const item = items[next++] as T;
      try {
        await fn(item);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  const lanes = Math.max(1, Math.min(limit, items.length));
  await Promise.all(Array.from({ length: lanes }, lane));
}
