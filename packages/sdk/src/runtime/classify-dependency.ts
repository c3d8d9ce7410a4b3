/**
 * How a call to an external service says whether that service is usable (docs/design.md §6.6):
 * - a `429` answer → `rate_limited`, with `Retry-After` (seconds or an HTTP date) as `retryAfterMs`;
 * - a `5xx` answer, a refused / reset / timed-out connection, an unknown host, a timeout abort → `down`;
 * - any other answer (a success, a `4xx` about the request itself) → `up`;
 * - any other thrown error (a bug in the caller, a plain abort) says nothing about the service.
 *
 * Errors and answers of common clients are understood: `fetch` Responses and its `TypeError('fetch
 * failed')` with a coded cause, node:http errors, SDK errors with `status` and `headers` (OpenAI,
 * Anthropic, Rouse's own), and axios-style errors with `response.status`.
 */
import type { DependencyState } from '@rouse/protocol';

/** What one call revealed about a dependency. */
export interface DependencyObservation {
  state: DependencyState;
  /** With `rate_limited`: how long to wait, from the `Retry-After` header. */
  retryAfterMs?: number;
  /** Why (the error or the status), at most 1024 characters. */
  message?: string;
}

/** Socket and DNS error codes that mean the service cannot be reached. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_SOCKET',
  // the SDK's own network errors (a Rouse coordinator used as a dependency)
  'timeout',
  'unavailable',
  'network_error',
]);

type Loose = {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  status?: unknown;
  statusCode?: unknown;
  headers?: unknown;
  response?: Loose;
  cause?: unknown;
};

/** Classify an answer (a value returned by the call). Response-like values are read by their status. */
export function classifyValue(value: unknown, now: number): DependencyObservation {
  const v = value as Loose | null | undefined;
  if (v && typeof v === 'object' && typeof v.status === 'number' && v.headers !== undefined) {
    return classifyStatus(v.status, v.headers, now) ?? { state: 'up' };
  }
  return { state: 'up' };
}

/** Classify a thrown error; undefined when it says nothing about the service. */
export function classifyError(error: unknown, now: number): DependencyObservation | undefined {
  let e = error as Loose | null | undefined;
  for (let depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    const status = numberOr(e.status) ?? numberOr(e.statusCode) ?? numberOr(e.response?.status);
    if (status !== undefined) {
      const headers = e.headers ?? e.response?.headers;
      return classifyStatus(status, headers, now, messageOf(e)) ?? { state: 'up' };
    }
    if (e.name === 'TimeoutError') return down(messageOf(e) ?? 'timed out');
    if (typeof e.code === 'string' && UNREACHABLE.has(e.code)) return down(messageOf(e) ?? e.code);
    // fetch: TypeError('fetch failed', { cause }); an AbortError caused by a timeout signal
    e = e.cause as Loose | null | undefined;
  }
  return undefined;
}

function classifyStatus(
  status: number,
  headers: unknown,
  now: number,
  message?: string,
): DependencyObservation | undefined {
  if (status === 429) {
    const retryAfterMs = parseRetryAfter(headerValue(headers, 'retry-after'), now);
    const out: DependencyObservation = { state: 'rate_limited', message: clip(message ?? 'HTTP 429') };
    if (retryAfterMs !== undefined) out.retryAfterMs = retryAfterMs;
    return out;
  }
  if (status >= 500 && status <= 599) return down(message ?? `HTTP ${status}`);
  return undefined;
}

/** `Retry-After`: delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** A header from a fetch `Headers`, a node:http header object, or a plain record (any case). */
function headerValue(headers: unknown, name: string): string | undefined {
  if (!headers || typeof headers !== 'object') return undefined;
  const h = headers as { get?: unknown } & Record<string, unknown>;
  if (typeof h.get === 'function') {
    const v = (h.get as (n: string) => unknown).call(h, name);
    if (v !== undefined && v !== null) return String(v);
  }
  for (const [k, v] of Object.entries(h)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? String(v[0]) : v == null ? undefined : String(v);
  }
  return undefined;
}

function down(message: string): DependencyObservation {
  return { state: 'down', message: clip(message) };
}

function messageOf(e: Loose): string | undefined {
  return typeof e.message === 'string' && e.message !== '' ? clip(e.message) : undefined;
}

function numberOr(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) ? v : undefined;
}

function clip(s: string): string {
  return s.length <= 1024 ? s : `${s.slice(0, 1021)}...`;
}
