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
import type { LoginCodeResponse, StreamEvent } from '@rouse/protocol';
import { WatchdogCalls } from './client/watchdog-calls.js';
import { readSseJson } from './sse.js';

export { type ClientOptions, type ResolvedClientOptions, resolveClientOptions } from './client-options.js';

export type { FetchedResult, ListAgentsQuery, ListTasksQuery } from './client-types.js';

/**
 * One method per endpoint. The methods live in layers by concern (`client/`): tasks, the holder's
 * writes, agents, the watchdog; this class adds the connection's own calls (events, health, tokens).
 */
export class Client extends WatchdogCalls {
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

  // ---- dashboard -------------------------------------------------------------------------------

  /**
   * `POST /v1/dashboard/login-codes` (admin) — a one-time login code for the dashboard: open
   * `<url><path>` in a browser within 5 minutes; it signs in once, with `role`'s rights. Sent again only
   * when it provably did nothing.
   */
  createLoginCode(role: 'admin' | 'readonly' = 'admin'): Promise<LoginCodeResponse> {
    const body = JSON.stringify({ role });
    return this.http.json('POST', '/v1/dashboard/login-codes', body, {
      retry: 'unapplied',
      waitForCoordinator: true,
    });
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
}
