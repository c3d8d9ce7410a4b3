/**
 * The task half of the {@link Client}: create, read, diagnose, cancel and retry tasks, read their logs
 * and results.
 */
import {
  type CreateTaskRequest,
  type CreateTaskResponse,
  type CreateTasksMinimalResponse,
  type Diagnosis,
  type ListTasksResponse,
  type LogLine,
  type LogsResponse,
  type Task,
  type TaskEvent,
  tasksFromMinimalReply,
} from '@rouse/protocol';
import type { FetchedResult, ListTasksQuery } from '../client-types.js';
import { RouseSdkError } from '../errors.js';
import { readSseJson } from '../sse.js';
import { ClientBase } from './client-base.js';

const id = encodeURIComponent;

export abstract class TaskCalls extends ClientBase {
  /**
   * `POST /v1/tasks`. Retried on transient errors when `idempotencyKey` is set; without one, only when
   * the create provably did nothing (no connection could be made, or a coordinator shutting down
   * refused it); such failures are retried for up to `retry.unreachableForMs` (10 s), through a
   * coordinator's restart. `deduplicated` is true when the key matched an existing task (which is
   * returned), false for a new task.
   */
  async createTask(req: CreateTaskRequest): Promise<CreateTaskResponse> {
    const res = await this.http.json<{ task: Task; deduplicated?: boolean }>(
      'POST',
      '/v1/tasks',
      JSON.stringify(req),
      { retry: req.idempotencyKey !== undefined ? true : 'unapplied', waitForCoordinator: true },
    );
    return { task: res.task, deduplicated: res.deduplicated === true };
  }

  /**
   * `POST /v1/tasks/batch` — all or nothing. Retried on transient errors when every task has an
   * `idempotencyKey`; otherwise only when the batch provably did nothing.
   * Asks for the minimal answer and rebuilds each created task from its request (`created-tasks.ts`
   * in `@rouse/protocol`): the same tasks as the full answer, for a tenth of the bytes.
   */
  async createTasks(reqs: CreateTaskRequest[]): Promise<Task[]> {
    const retry = reqs.every((r) => r.idempotencyKey !== undefined) ? true : 'unapplied';
    const res = await this.http.json<CreateTasksMinimalResponse | { tasks: Task[]; types?: undefined }>(
      'POST',
      '/v1/tasks/batch',
      JSON.stringify({ tasks: reqs, return: 'minimal' }),
      { retry, waitForCoordinator: true },
    );
    if (res.types === undefined) return res.tasks as Task[];
    try {
      return tasksFromMinimalReply(reqs, res);
    } catch (err) {
      throw new RouseSdkError(`POST /v1/tasks/batch: ${(err as Error).message}`, {
        code: 'bad_response',
        cause: err,
      });
    }
  }

  /** `GET /v1/tasks/{id}`. */
  async getTask(taskId: string): Promise<Task> {
    return (await this.get<{ task: Task }>(`/v1/tasks/${id(taskId)}`)).task;
  }

  /** `GET /v1/tasks?...` — one page; follow `nextCursor` for more. */
  listTasks(query: ListTasksQuery = {}): Promise<ListTasksResponse> {
    const q = new URLSearchParams();
    if (query.status !== undefined) q.set('status', [query.status].flat().join(','));
    if (query.type !== undefined) q.set('type', query.type);
    if (query.agentId !== undefined) q.set('agentId', query.agentId);
    for (const l of query.label ?? []) q.append('label', l);
    if (query.limit !== undefined) q.set('limit', String(query.limit));
    if (query.cursor !== undefined) q.set('cursor', query.cursor);
    const qs = q.toString();
    return this.get(qs ? `/v1/tasks?${qs}` : '/v1/tasks');
  }

  /** `GET /v1/tasks/{id}/events` — the task's transition history. */
  async getTaskEvents(taskId: string): Promise<TaskEvent[]> {
    return (await this.get<{ events: TaskEvent[] }>(`/v1/tasks/${id(taskId)}/events`)).events;
  }

  /** `GET /v1/tasks/{id}/diagnosis` — why the task is where it is. */
  diagnose(taskId: string): Promise<Diagnosis> {
    return this.get(`/v1/tasks/${id(taskId)}/diagnosis`);
  }

  /** `GET /v1/tasks/{id}/logs?after=` — the lines after sequence number `after`. */
  getLogs(taskId: string, options: { after?: number } = {}): Promise<LogsResponse> {
    const after = options.after === undefined ? '' : `?after=${options.after}`;
    return this.get(`/v1/tasks/${id(taskId)}/logs${after}`);
  }

  /**
   * Follow a task's logs (`GET /v1/tasks/{id}/logs` as `text/event-stream`): yields each line as it is
   * written; ends when the server closes the stream (the task is final) or `signal` aborts.
   */
  async *followLogs(
    taskId: string,
    options: { after?: number; signal?: AbortSignal } = {},
  ): AsyncIterable<LogLine> {
    const after = options.after === undefined ? '' : `?after=${options.after}`;
    const stream = await this.http.stream(`/v1/tasks/${id(taskId)}/logs${after}`, options.signal);
    yield* readSseJson<LogLine>(stream, options.signal);
  }

  /** `GET /v1/tasks/{id}/result` — the inline result or the stored blob, as bytes (and parsed when JSON). */
  async getResult(taskId: string): Promise<FetchedResult> {
    const res = await this.http.raw(`/v1/tasks/${id(taskId)}/result`, { retry: true });
    if (/[/+]json\b/i.test(res.contentType) && res.body.length > 0) {
      try {
        return { ...res, json: JSON.parse(res.body.toString('utf8')) };
      } catch (err) {
        throw new RouseSdkError(`the result of task ${taskId} says it is JSON but does not parse`, {
          code: 'bad_response',
          cause: err,
        });
      }
    }
    return res;
  }

  /**
   * `POST /v1/tasks/{id}/cancel`. The holder learns it on its next heartbeat. Sent again only when it
   * provably did nothing.
   */
  async cancelTask(taskId: string, reason?: string): Promise<Task> {
    const body = JSON.stringify(reason === undefined ? {} : { reason });
    const path = `/v1/tasks/${id(taskId)}/cancel`;
    return (
      await this.http.json<{ task: Task }>('POST', path, body, {
        retry: 'unapplied',
        waitForCoordinator: true,
      })
    ).task;
  }

  /**
   * `POST /v1/tasks/{id}/retry` — one more attempt for a final `failed`/`timeout` task. Sent again only
   * when it provably did nothing.
   */
  async retryTask(taskId: string): Promise<Task> {
    const path = `/v1/tasks/${id(taskId)}/retry`;
    return (
      await this.http.json<{ task: Task }>('POST', path, '{}', {
        retry: 'unapplied',
        waitForCoordinator: true,
      })
    ).task;
  }
}
