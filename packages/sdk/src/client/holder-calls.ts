/**
 * The writes of a task's holder (agent token, fenced by `version`): start, heartbeat, checkpoint,
 * effect keys, logs, result and blob uploads, complete and fail.
 */
import type {
  AppendLogsRequest,
  BlobRef,
  CheckpointRequest,
  ClaimEffectRequest,
  CompleteTaskRequest,
  EffectClaimResponse,
  EffectRecordResponse,
  FailTaskRequest,
  RecordEffectRequest,
  ResultRef,
  Task,
  TaskHeartbeatRequest,
  WriteOutcome,
} from '@rouse/protocol';
import type { CallOptions } from '../transport.js';
import { TaskCalls } from './task-calls.js';

const id = encodeURIComponent;

export abstract class HolderCalls extends TaskCalls {
  /** `POST /v1/tasks/{id}/start` — claimed → running. */
  async startTask(taskId: string, version: number): Promise<Task> {
    const body = JSON.stringify({ version });
    return (await this.http.json<{ task: Task }>('POST', `/v1/tasks/${id(taskId)}/start`, body)).task;
  }

  /** `POST /v1/tasks/{id}/heartbeat` — renew one lease (workers send one agent heartbeat instead). */
  heartbeatTask(taskId: string, req: TaskHeartbeatRequest): Promise<WriteOutcome> {
    return this.http.json('POST', `/v1/tasks/${id(taskId)}/heartbeat`, JSON.stringify(req), { retry: true });
  }

  /** `PUT /v1/tasks/{id}/checkpoint` — save resume state and session. */
  async checkpoint(taskId: string, req: CheckpointRequest): Promise<void> {
    await this.http.json('PUT', `/v1/tasks/${id(taskId)}/checkpoint`, JSON.stringify(req), { retry: true });
  }

  /**
   * `POST /v1/tasks/{id}/effects/{key}/claim` — claim effect key `key` of the task for this attempt
   * (`ctx.once`): `claimed` (run the effect, then {@link recordEffect}), `done` (it ran: here is its
   * result) or `running` (another claim holds it until `claimExpiresAt`; ask again). Not retried: a
   * repeat of a claim whose answer was lost would find the key `running` under this very claim, which
   * nobody would record or release until it lapses.
   */
  claimEffect(taskId: string, key: string, req: ClaimEffectRequest): Promise<EffectClaimResponse> {
    const path = `/v1/tasks/${id(taskId)}/effects/${id(key)}/claim`;
    return this.http.json('POST', path, JSON.stringify(req));
  }

  /**
   * `PUT /v1/tasks/{id}/effects/{key}` — record what the effect returned, under the claim that ran it.
   * `recorded`: this result is the key's; `done`: the key was recorded before (a claim that lapsed
   * was taken over) and `result` is the one kept — use it. Retried: a repeat finds the key recorded.
   * A claim that is no longer the key's is refused with `409 conflict`.
   */
  recordEffect(taskId: string, key: string, req: RecordEffectRequest): Promise<EffectRecordResponse> {
    const path = `/v1/tasks/${id(taskId)}/effects/${id(key)}`;
    return this.http.json('PUT', path, JSON.stringify(req), { retry: true });
  }

  /**
   * `DELETE /v1/tasks/{id}/effects/{key}?claimId=` — give a claim back (the effect failed), so that the
   * next claim of the key runs it. Retried: releasing twice is releasing once (which is why the
   * coordinator's `released` flag is not passed on — a retry of a release that worked says false).
   */
  async releaseEffect(taskId: string, key: string, claimId: string): Promise<void> {
    const path = `/v1/tasks/${id(taskId)}/effects/${id(key)}?claimId=${id(claimId)}`;
    await this.http.json('DELETE', path, undefined, { retry: true });
  }

  /** `POST /v1/tasks/{id}/logs` — append lines (not retried: a repeat would duplicate them). */
  appendLogs(taskId: string, req: AppendLogsRequest): Promise<{ accepted: number; truncated: boolean }> {
    return this.http.json('POST', `/v1/tasks/${id(taskId)}/logs`, JSON.stringify(req));
  }

  /** `PUT /v1/tasks/{id}/result?version=N` — store a large result as a blob; complete without `result` after. */
  async uploadResult(
    taskId: string,
    version: number,
    body: Buffer | string,
    contentType = typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/octet-stream',
  ): Promise<ResultRef> {
    const res = await this.http.bytes<ResultRef | { resultRef: ResultRef }>(
      'PUT',
      `/v1/tasks/${id(taskId)}/result?version=${version}`,
      body,
      contentType,
      { retry: true },
    );
    return 'resultRef' in res ? res.resultRef : res;
  }

  /**
   * `PUT /v1/tasks/{id}/blobs?version=N` — store bytes for the task (the holder only), e.g. a session
   * transcript a later attempt restores; returns the reference to keep (in a checkpoint's session).
   */
  async uploadTaskBlob(
    taskId: string,
    version: number,
    body: Buffer | string,
    contentType = typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/octet-stream',
  ): Promise<BlobRef> {
    const res = await this.http.bytes<{ blobRef: BlobRef }>(
      'PUT',
      `/v1/tasks/${id(taskId)}/blobs?version=${version}`,
      body,
      contentType,
      { retry: true },
    );
    return res.blobRef;
  }

  /** `GET /v1/tasks/{id}/blobs/{blobId}` — the bytes of a blob stored for the task. */
  async getTaskBlob(taskId: string, blobId: string): Promise<Buffer> {
    const res = await this.http.raw(`/v1/tasks/${id(taskId)}/blobs/${id(blobId)}`, { retry: true });
    return res.body;
  }

  /** `POST /v1/tasks/{id}/complete` — running → completed; idempotent per version. */
  async completeTask(taskId: string, req: CompleteTaskRequest, options: CallOptions = {}): Promise<Task> {
    const body = JSON.stringify(req);
    const res = await this.http.json<{ task: Task }>('POST', `/v1/tasks/${id(taskId)}/complete`, body, {
      retry: true,
      signal: options.signal,
    });
    return res.task;
  }

  /** `POST /v1/tasks/{id}/fail` — running → failed (retried later if retryable and attempts are left). */
  async failTask(taskId: string, req: FailTaskRequest, options: CallOptions = {}): Promise<Task> {
    const body = JSON.stringify(req);
    const res = await this.http.json<{ task: Task }>('POST', `/v1/tasks/${id(taskId)}/fail`, body, {
      retry: true,
      signal: options.signal,
    });
    return res.task;
  }
}
