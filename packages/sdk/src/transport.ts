/**
 * One HTTP exchange with the coordinator: bearer auth, a per-request timeout combined with the caller's
 * signal, error bodies turned into {@link RouseApiError}, network failures into {@link RouseNetworkError},
 * and retries with backoff for the calls the caller marked safe to repeat (and, for the others, when the
 * call provably did nothing).
 *
 * Kept lean on purpose: it sits in the hot path of the worker (thousands of requests per second),
 * so headers are built once and bodies are serialized once by the caller.
 */
import { createCallStreamSend } from './call-stream.js';
import { type Now, systemNow } from './clock.js';
import { isRetryable, RouseApiError, RouseNetworkError, RouseSdkError, wasNotApplied } from './errors.js';
import { createFetchSend, createNodeSend, type RawResponse, type Send, SendTimeout } from './http-send.js';
import { backoffDelayMs, type ResolvedRetryOptions, sleepMs } from './retry.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type FetchFn = typeof fetch;

/** Per-call switches. */
export interface CallOptions {
  /**
   * `true`: repeat on retryable errors (for calls that are safe to repeat). `'unapplied'`: repeat only
   * when the call provably did nothing ({@link wasNotApplied}), for calls that must not run twice.
   * `false` (the default): send once (the caller has its own retry loop).
   */
  retry?: boolean | 'unapplied';
  /**
   * While every failure proves the call did nothing, keep sending it past `attempts`, for up to
   * `retry.unreachableForMs` from the first failure: the calls a script makes (creates, cancels,
   * retries, commands) ride out a coordinator's restart. The runtimes' own calls leave this off: they
   * have their own loops.
   */
  waitForCoordinator?: boolean;
  /** Overrides the transport's request timeout (long-polls need more than their `waitMs`). */
  timeoutMs?: number;
  signal?: AbortSignal | undefined;
  /** Told of each failed try that will be retried (e.g. to notice a lost connection at the first one). */
  onRetry?: ((error: unknown, attempt: number) => void) | undefined;
}

export interface TransportConfig {
  baseUrl: string;
  token: string;
  /** Use this `fetch` for requests; by default node:http(s) with a keep-alive agent. */
  fetch: FetchFn | undefined;
  /** Send the streamed routes over a call stream (`call-stream.ts`); ignored with `fetch`. */
  callStream?: boolean;
  requestTimeoutMs: number;
  retry: ResolvedRetryOptions;
  /** The clock `retry.unreachableForMs` is counted on. @default the system clock */
  now?: Now;
}

/** An open event stream; call `release` when done reading. */
export interface OpenStream {
  body: ReadableStream<Uint8Array>;
  release(): void;
}

type Reader<T> = (res: RawResponse) => T;

export class Transport {
  readonly config: TransportConfig;
  private readonly jsonHeaders: Record<string, string>;
  private readonly plainHeaders: Record<string, string>;
  private readonly streamHeaders: Record<string, string>;
  private readonly send: Send;

  /** `send` is shared by transports made with {@link withToken} (one connection pool). */
  constructor(config: TransportConfig, send?: Send) {
    this.config = config;
    this.send = send ?? createSend(config);
    const auth: Record<string, string> = config.token ? { authorization: `Bearer ${config.token}` } : {};
    this.jsonHeaders = { ...auth, accept: 'application/json', 'content-type': 'application/json' };
    this.plainHeaders = { ...auth, accept: 'application/json' };
    this.streamHeaders = { ...auth, accept: 'text/event-stream' };
  }

  /** The same transport with another bearer token, sharing the connection pool. */
  withToken(token: string): Transport {
    return new Transport({ ...this.config, token }, this.send);
  }

  /** Close idle keep-alive connections (of every transport sharing the pool); the transport stays usable. */
  close(): void {
    this.send.close?.();
  }

  /** Send `body` (already a JSON string, or nothing) and parse the JSON answer (undefined when empty). */
  json<T>(method: HttpMethod, path: string, body: string | undefined, options: CallOptions = {}): Promise<T> {
    const headers = body === undefined ? this.plainHeaders : this.jsonHeaders;
    return this.call(method, path, body, headers, options, readJson as Reader<T>);
  }

  /** Send raw bytes with a content type and parse the JSON answer. */
  bytes<T>(
    method: HttpMethod,
    path: string,
    body: Buffer | string,
    contentType: string,
    options: CallOptions = {},
  ): Promise<T> {
    const headers = { ...this.plainHeaders, 'content-type': contentType };
    return this.call(method, path, body, headers, options, readJson as Reader<T>);
  }

  /** GET and return the raw answer: content type and bytes. */
  raw(path: string, options: CallOptions = {}): Promise<{ contentType: string; body: Buffer }> {
    return this.call('GET', path, undefined, { ...this.plainHeaders, accept: '*/*' }, options, readRaw);
  }

  /**
   * Open a server-sent event stream. The request timeout covers only the wait for the response
   * headers; after that the stream lives until the server closes it or `signal` aborts.
   */
  async stream(path: string, signal: AbortSignal | undefined): Promise<OpenStream> {
    const ac = new AbortController();
    const onAbort = (): void => ac.abort(signal?.reason);
    if (signal?.aborted) throw signal.reason;
    signal?.addEventListener('abort', onAbort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ac.abort();
    }, this.config.requestTimeoutMs);
    timer.unref();
    try {
      const res = await (this.config.fetch ?? globalThis.fetch)(this.config.baseUrl + path, {
        method: 'GET',
        headers: this.streamHeaders,
        signal: ac.signal,
      });
      if (res.status < 200 || res.status >= 300) {
        const body = Buffer.from(await res.arrayBuffer());
        throw toError({ status: res.status, contentType: res.headers.get('content-type') ?? '', body });
      }
      if (!res.body) throw new RouseSdkError(`GET ${path} returned no body`, { code: 'bad_response' });
      return { body: res.body, release: () => signal?.removeEventListener('abort', onAbort) };
    } catch (err) {
      signal?.removeEventListener('abort', onAbort);
      throw mapError(err, 'GET', path, signal, timedOut, this.config.requestTimeoutMs);
    } finally {
      clearTimeout(timer);
    }
  }

  private async call<T>(
    method: HttpMethod,
    path: string,
    body: string | Buffer | undefined,
    headers: Record<string, string>,
    options: CallOptions,
    read: Reader<T>,
  ): Promise<T> {
    const policy = this.config.retry;
    let firstFailureAt: number | undefined;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(method, path, body, headers, options, read);
      } catch (err) {
        if (!options.retry) throw err;
        if (!(options.retry === true ? isRetryable(err) : wasNotApplied(err))) throw err;
        const delay = backoffDelayMs(attempt, policy);
        const now = options.waitForCoordinator ? (this.config.now ?? systemNow)() : 0;
        firstFailureAt ??= now;
        if (attempt >= policy.attempts) {
          // Past the budget: only a call that provably did nothing, within its window.
          if (!options.waitForCoordinator || !wasNotApplied(err)) throw err;
          if (now + delay - firstFailureAt > policy.unreachableForMs) throw err;
        }
        options.onRetry?.(err, attempt);
        await sleepMs(delay, options.signal);
      }
    }
  }

  private async once<T>(
    method: HttpMethod,
    path: string,
    body: string | Buffer | undefined,
    headers: Record<string, string>,
    options: CallOptions,
    read: Reader<T>,
  ): Promise<T> {
    const timeoutMs = options.timeoutMs ?? this.config.requestTimeoutMs;
    let res: RawResponse;
    try {
      res = await this.send(method, this.config.baseUrl + path, headers, body, timeoutMs, options.signal);
    } catch (err) {
      throw mapError(err, method, path, options.signal, err instanceof SendTimeout, timeoutMs);
    }
    if (res.status >= 200 && res.status < 300) return read(res);
    throw toError(res);
  }
}

function createSend(config: TransportConfig): Send {
  if (config.fetch) return createFetchSend(config.fetch);
  const http = createNodeSend(config.baseUrl);
  return config.callStream ? createCallStreamSend(config.baseUrl, http) : http;
}

function mapError(
  err: unknown,
  method: string,
  path: string,
  signal: AbortSignal | undefined,
  timedOut: boolean,
  timeoutMs: number,
): unknown {
  if (err instanceof RouseSdkError) return err;
  if (signal?.aborted) return signal.reason;
  if (timedOut) {
    return new RouseNetworkError(`${method} ${path} timed out after ${timeoutMs} ms`, {
      code: 'timeout',
      cause: err,
    });
  }
  // node:http errors carry `code` themselves; fetch wraps them in `cause` (or an AggregateError in it)
  type Coded = { code?: unknown; message?: unknown; errors?: Coded[]; cause?: Coded };
  const e = err as Coded | undefined;
  const source = typeof e?.code === 'string' ? e : (e?.cause ?? e);
  const rawCode = source?.code ?? source?.errors?.[0]?.code;
  const code = typeof rawCode === 'string' ? rawCode : 'network_error';
  const detail =
    typeof source?.message === 'string' && source.message ? source.message : String(rawCode ?? err);
  return new RouseNetworkError(`${method} ${path} failed: ${detail}; is the coordinator reachable?`, {
    code,
    cause: err,
  });
}

function readJson(res: RawResponse): unknown {
  const text = res.body.toString('utf8');
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new RouseSdkError(`the coordinator answered ${res.status} with a body that is not JSON`, {
      code: 'bad_response',
      cause: err,
    });
  }
}

function readRaw(res: RawResponse): { contentType: string; body: Buffer } {
  return { contentType: res.contentType || 'application/octet-stream', body: res.body };
}

/** Turn a non-2xx answer into an error: the Rouse error body when there is one. */
function toError(res: RawResponse): Error {
  const text = res.body.toString('utf8');
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  const e = (parsed as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined)
    ?.error;
  if (e && typeof e.code === 'string') {
    const details =
      e.details && typeof e.details === 'object' ? (e.details as Record<string, unknown>) : undefined;
    return new RouseApiError(res.status, e.code, typeof e.message === 'string' ? e.message : e.code, details);
  }
  if (res.status === 502 || res.status === 503 || res.status === 504) {
    return new RouseNetworkError(`the coordinator is unavailable (HTTP ${res.status})`, {
      code: 'unavailable',
      status: res.status,
    });
  }
  return new RouseApiError(
    res.status,
    codeForStatus(res.status),
    `HTTP ${res.status}: ${text.slice(0, 200)}`,
  );
}

function codeForStatus(status: number): string {
  switch (status) {
    case 400:
      return 'validation_failed';
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 409:
      return 'conflict';
    case 413:
      return 'payload_too_large';
    case 429:
      return 'rate_limited';
    default:
      return status >= 500 ? 'internal' : 'http_error';
  }
}
