/**
 * The agent half of the {@link Client}: register, claim, heartbeat, commands, leave, read agents and
 * their conditions, send commands, and the agent's snapshot.
 */
import type {
  Agent,
  AgentCommand,
  AgentConditionRecord,
  AgentDiagnosis,
  AgentHeartbeatRequest,
  AgentHeartbeatResponse,
  AgentSnapshot,
  ClaimRequest,
  ClaimResponse,
  CommandAcksRequest,
  CommandAcksResponse,
  JsonObject,
  ListAgentsResponse,
  NextCommandsRequest,
  NextCommandsResponse,
  RegisterAgentRequest,
  RegisterAgentResponse,
  SendCommandResponse,
  SnapshotResponse,
  SnapshotWritten,
  SnapshotWrittenResponse,
} from '@rouse/protocol';
import type { ListAgentsQuery } from '../client-types.js';
import { RouseApiError } from '../errors.js';
import type { CallOptions } from '../transport.js';
import { HolderCalls } from './holder-calls.js';

const id = encodeURIComponent;
const MERGE_PATCH = 'application/merge-patch+json';

export abstract class AgentCalls extends HolderCalls {
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

  /**
   * `POST /v1/agents/{id}/commands/acks` — answer commands taken, at once rather than with the next
   * heartbeat (whose `acks` carry them otherwise). Not retried: a caller keeps what failed for its
   * next heartbeat.
   */
  acknowledgeCommands(
    agentId: string,
    req: CommandAcksRequest,
    options: Pick<CallOptions, 'signal' | 'timeoutMs'> = {},
  ): Promise<CommandAcksResponse> {
    return this.http.json('POST', `/v1/agents/${id(agentId)}/commands/acks`, JSON.stringify(req), options);
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
   * it opened (ended when the agent acknowledges the command). Sent again only when it provably did
   * nothing.
   */
  sendCommand(agentId: string, command: AgentCommand): Promise<SendCommandResponse> {
    return this.http.json('POST', `/v1/agents/${id(agentId)}/commands`, JSON.stringify(command), {
      retry: 'unapplied',
      waitForCoordinator: true,
    });
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
}
