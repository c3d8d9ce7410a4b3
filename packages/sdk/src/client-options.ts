/**
 * Options of the {@link Client}: `ClientOptions` → {@link resolveClientOptions} → `ResolvedClientOptions`.
 */
import { InvalidOptionError } from './errors.js';
import { type ResolvedRetryOptions, type RetryOptions, resolveRetryOptions } from './retry.js';
import type { FetchFn } from './transport.js';

/** Options of {@link Client}. */
export interface ClientOptions {
  /** Base URL of the coordinator, e.g. `http://127.0.0.1:7070` (no `/v1`). */
  url: string;
  /** Bearer token: admin, read-only, enrollment or agent token (docs/protocol.md "Auth"). */
  token: string;
  /** Send requests with this `fetch` implementation. @default node:http(s) with a keep-alive agent (cheaper per request than Node's fetch) */
  fetch?: FetchFn;
  /**
   * Send the hot calls (creates, claims, heartbeats, completions) as frames over one upgraded
   * connection instead of one HTTP request each: the same calls and answers at about half the
   * CPU per call on both ends. Falls back to plain HTTP by itself when the coordinator (or a proxy
   * in front of it) does not upgrade; not used with `fetch`. @default true
   */
  callStream?: boolean;
  /** Time limit of one request, the wait for the answer's body included. Long-poll claims get `waitMs` on top. @default 30000 */
  requestTimeoutMs?: number;
  /** Retry policy for retryable errors on calls that are safe to repeat. */
  retry?: RetryOptions;
}

/** {@link ClientOptions} with every default filled in. */
export interface ResolvedClientOptions {
  url: string;
  token: string;
  fetch: FetchFn | undefined;
  callStream: boolean;
  requestTimeoutMs: number;
  retry: ResolvedRetryOptions;
}

/** Fill defaults and reject bad values with an error naming the option and the rule. */
export function resolveClientOptions(options: ClientOptions): ResolvedClientOptions {
  if (typeof options?.url !== 'string' || !/^https?:\/\/[^/]/.test(options.url)) {
    throw new InvalidOptionError('url', 'must be an http(s) URL such as http://127.0.0.1:7070', options?.url);
  }
  if (typeof options.token !== 'string' || options.token === '')
    throw new InvalidOptionError(
      'token',
      'must be a non-empty string (an admin, read-only or agent token)',
      options.token,
    );
  const requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
  if (!Number.isInteger(requestTimeoutMs) || requestTimeoutMs < 1) {
    throw new InvalidOptionError('requestTimeoutMs', 'must be an integer >= 1', requestTimeoutMs);
  }
  const fetchFn = options.fetch;
  if (fetchFn !== undefined && typeof fetchFn !== 'function') {
    throw new InvalidOptionError('fetch', 'must be a function');
  }
  const callStream = options.callStream ?? true;
  if (typeof callStream !== 'boolean') {
    throw new InvalidOptionError('callStream', 'must be a boolean', callStream);
  }
  return {
    url: options.url.replace(/\/+$/, ''),
    token: options.token,
    fetch: fetchFn,
    callStream: callStream && fetchFn === undefined,
    requestTimeoutMs,
    retry: resolveRetryOptions(options.retry),
  };
}
