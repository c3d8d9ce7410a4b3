/**
 * Task helpers shared by the workloads: batched creation, bounded concurrency, paging through lists.
 */
import type { CreateTaskRequest, ListTasksResponse, Task, TaskStatus } from '@rouse/protocol';
import type { HttpClient } from './http-client.js';

/** Run `fn(0..count-1)` with at most `concurrency` in flight. */
export async function runConcurrent(
  count: number,
  concurrency: number,
  fn: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (next < count) {
      const i = next++;
      await fn(i);
    }
  });
  await Promise.all(lanes);
}

/**
 * Create `total` tasks through `POST /v1/tasks/batch`, `batchSize` per request, `parallel` requests in
 * flight, asking for the minimal answer as the SDK's `createTasks` does.
 */
export async function createBatched(
  http: HttpClient,
  total: number,
  batchSize: number,
  parallel: number,
  make: (index: number) => CreateTaskRequest,
): Promise<void> {
  const batches = Math.ceil(total / batchSize);
  await runConcurrent(batches, parallel, async (b) => {
    const tasks: CreateTaskRequest[] = [];
    for (let i = b * batchSize; i < Math.min(total, (b + 1) * batchSize); i++) tasks.push(make(i));
    await http.post('/v1/tasks/batch', { tasks, return: 'minimal' }, { parse: false });
  });
}

export interface ListFilter {
  type?: string;
  statuses?: TaskStatus[];
}

function listPath(filter: ListFilter, limit: number, cursor: string | null): string {
  const q = new URLSearchParams();
  if (filter.type) q.set('type', filter.type);
  if (filter.statuses) q.set('status', filter.statuses.join(','));
  q.set('limit', String(limit));
  if (cursor) q.set('cursor', cursor);
  return `/v1/tasks?${q.toString()}`;
}

/** Every task matching `filter`, 1,000 per page. */
export async function listAll(http: HttpClient, filter: ListFilter): Promise<Task[]> {
  const all: Task[] = [];
  let cursor: string | null = null;
  do {
    const page: ListTasksResponse = await http.get<ListTasksResponse>(listPath(filter, 1000, cursor));
    all.push(...page.tasks);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

/** Whether at least one task matches `filter` (one tiny request). */
export async function anyTask(http: HttpClient, filter: ListFilter): Promise<boolean> {
  const page = await http.get<ListTasksResponse>(listPath(filter, 1, null));
  return page.tasks.length > 0;
}

export const UNFINISHED: TaskStatus[] = ['created', 'claimed', 'running', 'failed', 'timeout'];

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** `promise`, or a rejection with `message()` after `ms` (the timer is cleared either way). */
export async function withTimeout<T>(promise: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message())), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
