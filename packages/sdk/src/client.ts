/**
 * The typed HTTP client of the Rouse protocol (docs/protocol.md): one method per endpoint. Responses are
 * unwrapped (`{"task": ...}` → `Task`), non-2xx answers throw {@link RouseApiError}, an unreachable
 * coordinator throws {@link RouseNetworkError}.
 *
 * Retries: GETs and the writes that are idempotent by design (heartbeats, checkpoint, result upload,
 * complete and fail — all fenced by `version` —, recording and releasing an effect key — named by
 * their claim — and create with an `idempotencyKey`) are retried with backoff on retryable errors
 * ({@link isRetryable}). Other writes (claim, start, logs, cancel, effect claims, ...) are sent once:
 * repeating them could do the thing twice.
 *
 * @example
 * const client = new Client({ url: 'http://127.0.0.1:7070', token: process.env.ROUSE_TOKEN! });
 * const { task } = await client.createTask({ type: 'report', payload: { month: '2025-01' } });
 * const why = await client.diagnose(task.id);
 */
import type {
  Agent,
  AgentCommand,
  AgentConditionRecord,
  AgentDiagnosis,
  AgentHeartbeatRequest,
  AgentHeartbeatResponse,
  AgentSnapshot,
  Alert,
  AlertState,
  AlertsResponse,
  AppendLogsRequest,
  BlobRef,
  CheckPoliciesResponse,
  CheckpointRequest,
  ClaimEffectRequest,
  ClaimRequest,
  ClaimResponse,
  CompleteTaskRequest,
  CreateTaskRequest,
  CreateTaskResponse,
  Diagnosis,
  EffectClaimResponse,
  EffectRecordResponse,
  FailTaskRequest,
  Intervention,
  InterventionState,
  InterventionsResponse,
  JsonObject,
  ListAgentsResponse,
  ListTasksResponse,
  LoginCodeResponse,
  LogLine,
  LogsResponse,
  NextCommandsRequest,
  NextCommandsResponse,
  PoliciesResponse,
  RecordEffectRequest,
  RegisterAgentRequest,
  RegisterAgentResponse,
  ResultRef,
  SendCommandResponse,
  SnapshotResponse,
  SnapshotWritten,
  SnapshotWrittenResponse,
  StreamEvent,
  Task,
  TaskEvent,
  TaskHeartbeatRequest,
  WriteOutcome,
} from '@rouse/protocol';
import { type ClientOptions, type ResolvedClientOptions, resolveClientOptions } from './client-options.js';
import type { FetchedResult, ListAgentsQuery, ListTasksQuery } from './client-types.js';
import { RouseApiError, RouseSdkError } from './errors.js';
import { readSseJson } from './sse.js';
import { type CallOptions, Transport } from './transport.js';

export { type ClientOptions, type ResolvedClientOptions, resolveClientOptions } from './client-options.js';

export type { FetchedResult, ListAgentsQuery, ListTasksQuery } from './client-types.js';

const id = encodeURIComponent;
const MERGE_PATCH = 'application/merge-patch+json';

export class Client {
  readonly options: ResolvedClientOptions;
  private readonly http: Transport;

  /** @param transport internal: share a transport's connection pool ({@link withToken}). */
  constructor(options: ClientOptions, transport?: Transport) {
    this.options = resolveClientOptions(options);
    const { url, token, fetch, requestTimeoutMs, retry } = this.options;
    this.http = transport ?? new Transport({ baseUrl: url, token, fetch, requestTimeoutMs, retry });
  }

  /**
   * The same coordinator and settings with another token (e.g. the agent token returned by register),
   * sharing this client's connections.
   */
  withToken(token: string): Client {
    return new Client({ ...this.options, token }, this.http.withToken(token));
  }

  /**
   * Close idle keep-alive connections (shared with clients made by {@link withToken}). Optional:
   * idle connections never keep the process alive. The client stays usable.
   */
  close(): void {
    this.http.close();
  }

  // ---- tasks -----------------------------------------------------------------------------------

  /**
   * `POST /v1/tasks`. Retried on transient errors only when `idempotencyKey` is set. `deduplicated` is
   * true when the key matched an existing task (which is returned), false for a new task.
   */
  async createTask(req: CreateTaskRequest): Promise<CreateTaskResponse> {
    const res = await this.http.json<{ task: Task; deduplicated?: boolean }>(
      'POST',
      '/v1/tasks',
      JSON.stringify(req),
      { retry: req.idempotencyKey !== undefined },
    );
    return { task: res.task, deduplicated: res.deduplicated === true };
  }

  /** `POST /v1/tasks/batch` — all or nothing. Retried only when every task has an `idempotencyKey`. */
  async createTasks(reqs: CreateTaskRequest[]): Promise<Task[]> {
    const retry = reqs.every((r) => r.idempotencyKey !== undefined);
    const res = await this.http.json<{ tasks: Task[] }>(
      'POST',
      '/v1/tasks/batch',
      JSON.stringify({ tasks: reqs }),
      {
        retry,
      },
    );
    return res.tasks;
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

  /** `POST /v1/tasks/{id}/cancel`. The holder learns it on its next heartbeat. */
  async cancelTask(taskId: string, reason?: string): Promise<Task> {
    const body = JSON.stringify(reason === undefined ? {} : { reason });
    return (await this.http.json<{ task: Task }>('POST', `/v1/tasks/${id(taskId)}/cancel`, body)).task;
  }

  /** `POST /v1/tasks/{id}/retry` — one more attempt for a final `failed`/`timeout` task. */
  async retryTask(taskId: string): Promise<Task> {
    return (await this.http.json<{ task: Task }>('POST', `/v1/tasks/${id(taskId)}/retry`, '{}')).task;
  }

  // ---- agents ----------------------------------------------------------------------------------

  /** `POST /v1/agents` (enrollment or admin token) → the agent, its token and heartbeat interval. */
  registerAgent(
    req: RegisterAgentRequest,
    options: Pick<CallOptions, 'retry' | 'signal' | 'timeoutMs'> = {},
  ): Promise<RegisterAgentResponse> {
    return this.http.json('POST', '/v1/agents', JSON.stringify(req), {
      ...options,
      retry: options.retry ?? false,
    });
  }

  /**
   * `POST /v1/agents/{id}/claim` — long-polls up to `req.waitMs`; the request timeout is extended by it
   * (`options.timeoutMs` replaces the whole limit). Never retried: a lost answer would leave tasks
   * claimed and unseen.
   */
  claim(
    agentId: string,
    req: ClaimRequest,
    options: Pick<CallOptions, 'signal' | 'timeoutMs'> = {},
  ): Promise<ClaimResponse> {
    const timeoutMs = options.timeoutMs ?? this.options.requestTimeoutMs + (req.waitMs ?? 0);
    return this.http.json('POST', `/v1/agents/${id(agentId)}/claim`, JSON.stringify(req), {
      timeoutMs,
      signal: options.signal,
    });
  }

  /**
   * `POST /v1/agents/{id}/heartbeat` — the agent's heartbeat carrying its tasks' heartbeats. Retried;
   * the runtimes give it a short `timeoutMs` so that a dead connection is noticed quickly.
   */
  agentHeartbeat(
    agentId: string,
    req: AgentHeartbeatRequest,
    options: Pick<CallOptions, 'signal' | 'timeoutMs' | 'onRetry'> = {},
  ): Promise<AgentHeartbeatResponse> {
    return this.http.json('POST', `/v1/agents/${id(agentId)}/heartbeat`, JSON.stringify(req), {
      ...options,
      retry: true,
    });
  }

  /**
   * `POST /v1/agents/{id}/commands/next` — take the agent's queued commands, long-polling up to
   * `req.waitMs` for one (the request timeout is extended by it). Never retried: a lost answer would
   * lose the commands it carried (the watchdog's timeouts then move on).
   */
  nextCommands(
    agentId: string,
    req: NextCommandsRequest = {},
    options: Pick<CallOptions, 'signal' | 'timeoutMs'> = {},
  ): Promise<NextCommandsResponse> {
    const timeoutMs = options.timeoutMs ?? this.options.requestTimeoutMs + (req.waitMs ?? 0);
    return this.http.json('POST', `/v1/agents/${id(agentId)}/commands/next`, JSON.stringify(req), {
      timeoutMs,
      signal: options.signal,
    });
  }

  /** `DELETE /v1/agents/{id}` — graceful leave; held tasks move to `timeout` at once. */
  async leave(agentId: string, options: Pick<CallOptions, 'timeoutMs' | 'signal'> = {}): Promise<void> {
    await this.http.json('DELETE', `/v1/agents/${id(agentId)}`, undefined, options);
  }

  /**
   * `GET /v1/agents?status=&agentType=&taskType=`, every page — agents with their derived status and
   * open conditions. {@link listAgentsPage} reads one page.
   */
  async listAgents(query: Omit<ListAgentsQuery, 'limit' | 'cursor'> = {}): Promise<Agent[]> {
    const all: Agent[] = [];
    let cursor: string | null = null;
    do {
      const page: ListAgentsResponse = await this.listAgentsPage({ ...query, ...(cursor ? { cursor } : {}) });
      all.push(...page.agents);
      // A coordinator that does not page (no nextCursor) answered everything at once.
      cursor = page.nextCursor ?? null;
    } while (cursor !== null);
    return all;
  }

  /** `GET /v1/agents`, one page (up to `limit`, default 1000; then `nextCursor`). */
  async listAgentsPage(query: ListAgentsQuery = {}): Promise<ListAgentsResponse> {
    const q = new URLSearchParams();
    if (query.status !== undefined) q.set('status', [query.status].flat().join(','));
    if (query.agentType !== undefined) q.set('agentType', query.agentType);
    if (query.taskType !== undefined) q.set('taskType', query.taskType);
    if (query.limit !== undefined) q.set('limit', String(query.limit));
    if (query.cursor !== undefined) q.set('cursor', query.cursor);
    const qs = q.toString();
    return this.get<ListAgentsResponse>(qs ? `/v1/agents?${qs}` : '/v1/agents');
  }

  /** `GET /v1/agents/{id}`. */
  async getAgent(agentId: string): Promise<Agent> {
    return (await this.get<{ agent: Agent }>(`/v1/agents/${id(agentId)}`)).agent;
  }

  /** `GET /v1/agents/{id}/diagnosis` — why the agent is in its status, with evidence and suggestions. */
  diagnoseAgent(agentId: string): Promise<AgentDiagnosis> {
    return this.get(`/v1/agents/${id(agentId)}/diagnosis`);
  }

  /**
   * `GET /v1/agents/{id}/conditions?open=&limit=` — the agent's conditions, open and closed, newest
   * first (`open: true` only the open ones, `false` only the closed ones).
   */
  async agentConditions(
    agentId: string,
    query: { open?: boolean; limit?: number } = {},
  ): Promise<AgentConditionRecord[]> {
    const q = new URLSearchParams();
    if (query.open !== undefined) q.set('open', String(query.open));
    if (query.limit !== undefined) q.set('limit', String(query.limit));
    const qs = q.toString();
    const path = `/v1/agents/${id(agentId)}/conditions${qs ? `?${qs}` : ''}`;
    return (await this.get<{ conditions: AgentConditionRecord[] }>(path)).conditions;
  }

  /**
   * `POST /v1/agents/{id}/commands` (admin) — `wake`, `cancel`, `checkpoint`, `restart` or `terminate`.
   * Resolves with the command's id and, for `wake`, `restart` and `terminate`, the manual intervention
   * it opened (ended when the agent acknowledges the command).
   */
  sendCommand(agentId: string, command: AgentCommand): Promise<SendCommandResponse> {
    return this.http.json('POST', `/v1/agents/${id(agentId)}/commands`, JSON.stringify(command));
  }

  /** `GET /v1/interventions` — interventions newest first, filtered, a page at a time. */
  listInterventions(
    query: {
      agentId?: string;
      taskId?: string;
      states?: InterventionState[];
      limit?: number;
      cursor?: string;
    } = {},
  ): Promise<InterventionsResponse> {
    const q = new URLSearchParams();
    if (query.agentId !== undefined) q.set('agentId', query.agentId);
    if (query.taskId !== undefined) q.set('taskId', query.taskId);
    if (query.states !== undefined && query.states.length > 0) q.set('state', query.states.join(','));
    if (query.limit !== undefined) q.set('limit', String(query.limit));
    if (query.cursor !== undefined) q.set('cursor', query.cursor);
    const qs = q.toString();
    return this.get<InterventionsResponse>(qs ? `/v1/interventions?${qs}` : '/v1/interventions');
  }

  /** `GET /v1/alerts` — alerts (grouped by agent type and condition) newest first, by state, a page at a time. */
  listAlerts(
    query: { states?: AlertState[]; limit?: number; cursor?: string } = {},
  ): Promise<AlertsResponse> {
    const q = new URLSearchParams();
    if (query.states !== undefined && query.states.length > 0) q.set('state', query.states.join(','));
    if (query.limit !== undefined) q.set('limit', String(query.limit));
    if (query.cursor !== undefined) q.set('cursor', query.cursor);
    const qs = q.toString();
    return this.get<AlertsResponse>(qs ? `/v1/alerts?${qs}` : '/v1/alerts');
  }

  /** `GET /v1/alerts/{id}` — one alert with its notifications (every delivery attempt). */
  async getAlert(alertId: string): Promise<Alert> {
    return (await this.get<{ alert: Alert }>(`/v1/alerts/${id(alertId)}`)).alert;
  }

  /** `GET /v1/interventions/{id}`. */
  async getIntervention(interventionId: string): Promise<Intervention> {
    return (await this.get<{ intervention: Intervention }>(`/v1/interventions/${id(interventionId)}`))
      .intervention;
  }

  // ---- agent snapshots (the agent's own token, or admin) -----------------------------------------

  /**
   * `PUT /v1/agents/{id}/snapshot` — store a full snapshot of the agent's state (a JSON object), kept
   * `ttlMs` after this write (default 24 h). Retried: storing it twice is storing it once.
   */
  async putSnapshot(
    agentId: string,
    state: JsonObject,
    options: { ttlMs?: number } = {},
  ): Promise<SnapshotWritten> {
    const body = JSON.stringify(options.ttlMs === undefined ? { state } : { state, ttlMs: options.ttlMs });
    const path = `/v1/agents/${id(agentId)}/snapshot`;
    return (await this.http.json<SnapshotWrittenResponse>('PUT', path, body, { retry: true })).snapshot;
  }

  /**
   * `PATCH /v1/agents/{id}/snapshot` — apply a JSON merge patch (RFC 7386: `null` removes a member,
   * objects merge, anything else replaces) to the stored snapshot; `ttlMs` renews it with a new TTL
   * (else its own). Throws `404 not_found` when there is no live snapshot to patch: send a full one.
   * Retried: a merge patch applied twice gives what it gives once.
   */
  async patchSnapshot(
    agentId: string,
    patch: JsonObject,
    options: { ttlMs?: number } = {},
  ): Promise<SnapshotWritten> {
    const qs = options.ttlMs === undefined ? '' : `?ttlMs=${options.ttlMs}`;
    const path = `/v1/agents/${id(agentId)}/snapshot${qs}`;
    const res = await this.http.bytes<SnapshotWrittenResponse>(
      'PATCH',
      path,
      JSON.stringify(patch),
      MERGE_PATCH,
      {
        retry: true,
      },
    );
    return res.snapshot;
  }

  /** `GET /v1/agents/{id}/snapshot` — the agent's current snapshot, or null when it has none (404). */
  async getSnapshot(agentId: string): Promise<AgentSnapshot | null> {
    try {
      return (await this.get<SnapshotResponse>(`/v1/agents/${id(agentId)}/snapshot`)).snapshot;
    } catch (err) {
      if (err instanceof RouseApiError && err.status === 404 && err.code === 'not_found') return null;
      throw err;
    }
  }

  // ---- task writes by the holder (agent token, fenced by version) ------------------------------

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

  // ---- policies ------------------------------------------------------------------------------

  /** `GET /v1/policies` — the watchdog policies in force, their file, and the last refused reload. */
  policies(): Promise<PoliciesResponse> {
    return this.get('/v1/policies');
  }

  /**
   * `POST /v1/policies/check` — validate a policy file's text (YAML) without applying it; `file` is the
   * name errors are reported under. Answers whether or not the file is valid.
   */
  checkPolicies(source: string, file?: string): Promise<CheckPoliciesResponse> {
    const body = JSON.stringify(file === undefined ? { source } : { source, file });
    return this.http.json('POST', '/v1/policies/check', body, { retry: true });
  }

  // ---- dashboard -------------------------------------------------------------------------------

  /**
   * `POST /v1/dashboard/login-codes` (admin) — a one-time login code for the dashboard: open
   * `<url><path>` in a browser within 5 minutes; it signs in once, with `role`'s rights.
   */
  createLoginCode(role: 'admin' | 'readonly' = 'admin'): Promise<LoginCodeResponse> {
    return this.http.json('POST', '/v1/dashboard/login-codes', JSON.stringify({ role }), { retry: false });
  }

  // ---- events and health -----------------------------------------------------------------------

  /** `GET /v1/events` (SSE): every task and agent event as it happens, until `signal` aborts. */
  async *events(options: { signal?: AbortSignal } = {}): AsyncIterable<StreamEvent> {
    yield* await this.openEvents(options);
  }

  /**
   * `GET /v1/events`, connected before it resolves: every event from then on is in the iterable
   * (`events()` connects only when first read). For reading a list and then its changes, none lost.
   */
  async openEvents(options: { signal?: AbortSignal } = {}): Promise<AsyncIterable<StreamEvent>> {
    const stream = await this.http.stream('/v1/events', options.signal);
    return readSseJson<StreamEvent>(stream, options.signal);
  }

  /** `GET /healthz` — the process is up. */
  async health(): Promise<{ ok: true }> {
    await this.http.raw('/healthz');
    return { ok: true };
  }

  /** `GET /readyz` — the store is reachable. */
  async ready(): Promise<{ ok: true }> {
    await this.http.raw('/readyz');
    return { ok: true };
  }

  private get<T>(path: string): Promise<T> {
    return this.http.json<T>('GET', path, undefined, { retry: true });
  }
}
