/**
 * The one error handler: every non-2xx body is `{error: {code, message, details}}` (docs/protocol.md
 * "Errors"). Routes throw `RouseError`s; Fastify's own parse errors are mapped here; anything else
 * is a bug, logged and answered `500 internal`.
 */
import { ERROR_STATUS, type ErrorBody, type ErrorCode } from '@rouse/protocol';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RouseError } from '../core/errors.js';
import { MAX_PATH_PARAM_BYTES, type ResolvedApiLimits } from './limits.js';
import { settleUnreadBody, type UnreadBodyOptions } from './unread-body.js';

/** Build the wire body for an error. */
export function errorBody(
  code: ErrorCode,
  message: string,
  details: Record<string, unknown> = {},
): ErrorBody {
  return { error: { code, message, details } };
}

/** The logger calls `errorAnswer` makes (pino's and Fastify's loggers have them). */
interface ErrorLog {
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * The status and body answering a failed request, logged by severity. `known`: the error as a
 * `RouseError` when it is one of ours; anything else is a bug, answered `500 internal`.
 */
export function errorAnswer(
  err: unknown,
  known: RouseError | null,
  log: ErrorLog,
  request: { method: string; url: string },
): { status: number; body: ErrorBody } {
  if (known) {
    // A store outage is logged once by the coordinator (store-health); each request it turns away is not news.
    if (known.code === 'unavailable') log.debug({ err: known, code: known.code }, 'request failed');
    else if (known.status >= 500) log.warn({ err: known, code: known.code }, 'request failed');
    return { status: known.status, body: errorBody(known.code, known.message, known.details) };
  }
  log.error({ err, method: request.method, url: request.url }, 'unhandled error in request');
  return { status: 500, body: errorBody('internal', 'internal error; the coordinator logged the cause', {}) };
}

/** A body over its route's limit (HTTP and the call stream word it alike). */
export function bodyTooLargeError(limitBytes: number): RouseError {
  return new RouseError('payload_too_large', `the body exceeds this route's limit of ${limitBytes} bytes`, {
    limitBytes,
  });
}

/** A body that is not JSON. */
export function badJsonError(): RouseError {
  return new RouseError('bad_json', 'the body is not valid JSON', {});
}

/**
 * The error for a body the JSON parser refused. The parser also refuses valid JSON with a `__proto__`
 * key or a `constructor.prototype` (keys that would reach objects' prototypes in code that reads
 * them); that is said as such rather than as "not valid JSON". Called on the error path only.
 */
export function refusedJsonError(text: string, err: Error): Error {
  try {
    JSON.parse(text);
  } catch {
    return err;
  }
  return new RouseError(
    'bad_json',
    'the body has a "__proto__" key or a "constructor" with a "prototype" key, which are refused anywhere in a body (payloads included): rename the key',
    {},
  );
}

/** A path parameter too long to be an id: `payload_too_large`, with HTTP's status for a long URI. */
class PathParamTooLongError extends RouseError {
  override get status(): number {
    return 414;
  }
}

/** A path parameter longer than `MAX_PATH_PARAM_BYTES` (414 `payload_too_large`). */
export function pathParamTooLongError(): RouseError {
  return new PathParamTooLongError(
    'payload_too_large',
    `a path parameter is longer than ${MAX_PATH_PARAM_BYTES} bytes; no id or name is that long`,
    { part: 'path parameter', limitBytes: MAX_PATH_PARAM_BYTES },
  );
}

/** Why a path with a malformed `%` escape cannot be routed. */
export const BAD_PERCENT_ENCODING = 'is not valid percent-encoded UTF-8';

/** A path that cannot be routed (`rule` says why; `code` names the check). */
export function badPathError(rule: string, code: string, path: string): RouseError {
  return new RouseError('validation_failed', `path: ${rule}; encode ids with encodeURIComponent`, {
    issues: [{ path: 'path', message: rule, code }],
    path: path.slice(0, 256),
  });
}

/** Translate any thrown value into a `RouseError` (unknown errors become `internal`). */
export function toRouseError(
  err: unknown,
  request: FastifyRequest,
  limits: ResolvedApiLimits,
): RouseError | null {
  if (err instanceof RouseError) return err;
  const e = err as Partial<FastifyError> & { type?: string };
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return bodyTooLargeError(request.routeOptions.bodyLimit ?? limits.jsonBodyBytes);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new RouseError(
        'unsupported_media_type',
        `content type ${JSON.stringify(request.headers['content-type'] ?? '(none)')} is not accepted here; send application/json`,
        { contentType: request.headers['content-type'] ?? null },
      );
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return badJsonError();
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new RouseError('bad_json', 'the body is empty but content-type says application/json', {});
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new RouseError('bad_json', 'the body length does not match the content-length header', {});
    default:
      break;
  }
  // Other framework errors that carry a 4xx status (bad URL, aborted body, ...): keep the status.
  const status = typeof e.statusCode === 'number' ? e.statusCode : 0;
  if (status >= 400 && status < 500) {
    const code = codeForStatus(status);
    return new RouseError(code, e.message || code, {});
  }
  return null;
}

function codeForStatus(status: number): ErrorCode {
  for (const [code, s] of Object.entries(ERROR_STATUS)) {
    if (s === status && code !== 'bad_json') return code as ErrorCode;
  }
  return 'validation_failed';
}

/** What a refusal does with a body it did not read (`unread-body.ts`). */
export function unreadBodyOptions(limits: ResolvedApiLimits): UnreadBodyOptions {
  return { drainBytes: limits.jsonBodyBytes, lingerMs: limits.closeLingerMs };
}

/**
 * Fastify's `frameworkErrors`: errors its router raises before any route or hook runs, which would
 * otherwise leave in Fastify's own shape — a path that is not valid percent-encoding, and a path
 * parameter longer than `MAX_PATH_PARAM_BYTES` (414, which docs/protocol.md answers `payload_too_large`).
 */
export function frameworkErrorHandler(limits: ResolvedApiLimits) {
  const unread = unreadBodyOptions(limits);
  return (err: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    settleUnreadBody(request, reply, unread);
    const path = request.raw.url?.split('?')[0] ?? '';
    const refusal =
      err.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? pathParamTooLongError()
        : err.code === 'FST_ERR_BAD_URL'
          ? badPathError(BAD_PERCENT_ENCODING, err.code, path)
          : badPathError('cannot be routed', err.code ?? 'invalid_path', path);
    reply.code(refusal.status).send(errorBody(refusal.code, refusal.message, refusal.details));
  };
}

/**
 * Answers a browser's own request for a page that does not exist (not under /v1) in HTML, or returns
 * null for any other request (which gets the protocol's JSON); set by the dashboard once registered.
 */
export type HtmlNotFound = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> | null;

export function installErrorHandlers(
  app: FastifyInstance,
  limits: ResolvedApiLimits,
  pages: { notFound?: HtmlNotFound } = {},
): void {
  const unread = unreadBodyOptions(limits);
  app.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    settleUnreadBody(request, reply, unread);
    const answer = errorAnswer(err, toRouseError(err, request, limits), request.log, {
      method: request.method,
      url: request.url,
    });
    return reply.code(answer.status).send(answer.body);
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    settleUnreadBody(request, reply, unread);
    const path = request.url.split('?')[0] ?? '';
    const page =
      path.startsWith('/v1/') || request.method !== 'GET' ? null : pages.notFound?.(request, reply);
    if (page) return page;
    return reply.code(404).send(
      errorBody('not_found', `no route ${request.method} ${path}; see GET /v1/openapi.json`, {
        kind: 'route',
      }),
    );
  });
}
