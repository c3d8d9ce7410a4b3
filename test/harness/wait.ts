import type { Task } from '@rouse/protocol';

/** Bounded polling for conditions that live in another process. Never an unbounded loop. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  {
    timeoutMs = 20_000,
    intervalMs = 25,
    what = 'condition',
  }: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== null && v !== false) return v as T;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Wait until task `id` has ended: completed, cancelled, or failed / timed out with no retry left
 * (its last attempt, or an error that is not retryable).
 */
export async function waitForTaskEnd(
  admin: { getTask(id: string): Promise<Task> },
  id: string,
  { timeoutMs = 20_000, intervalMs = 50 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<Task> {
  return waitFor(
    async () => {
      const t = await admin.getTask(id);
      if (t.status === 'completed' || t.status === 'cancelled') return t;
      const last = t.attempt >= t.maxAttempts || t.error?.retryable === false;
      return (t.status === 'failed' || t.status === 'timeout') && last ? t : null;
    },
    { what: `task ${id} to end`, timeoutMs, intervalMs },
  );
}
