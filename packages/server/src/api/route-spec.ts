/**
 * The route table: every route is declared once with its access rule and request schemas. The same
 * declarations drive registration, the auth hook and the OpenAPI document, so the document cannot
 * miss a route.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { RouseError } from '../core/errors.js';
import type { Caller, Coordinator } from '../services/coordinator.js';
import { type Access, authHook } from './auth.js';
import type { ResolvedApiLimits } from './limits.js';
import type { ApiMetrics } from './metrics.js';
import type { SseHub } from './sse.js';

export type { Access };

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteSpec {
  method: HttpMethod;
  /** Fastify path syntax (`/v1/tasks/:id`). */
  url: string;
  access: Access;
  summary: string;
  /** JSON body schema; omitted for routes without a JSON body. */
  body?: z.ZodType;
  /** Name of the body schema in the OpenAPI components. */
  bodyName?: string;
  /** The media type of `body`. @default 'application/json' */
  bodyMediaType?: string;
  /** The body may be omitted entirely (`cancel`, `retry`). */
  bodyOptional?: boolean;
  query?: z.ZodType;
  queryName?: string;
  /** Bytes; defaults to the app's JSON body limit. */
  bodyLimit?: number;
  /** Media types of the request body besides JSON (the result upload takes any). */
  consumes?: string[];
  /** Media types of the response besides JSON. */
  produces?: string[];
  /** 2xx status of the happy path. @default 200 */
  successStatus?: number;
}

/** What every route module gets. */
export interface RouteContext {
  coordinator: Coordinator;
  limits: ResolvedApiLimits;
  logger: Logger;
  metrics: ApiMetrics;
  sse: SseHub;
  metricsPublic: boolean;
  /** Every declared route, in registration order (read by the OpenAPI route). */
  routes: RouteSpec[];
  /** The routes also served on the call stream (`call-stream.ts`), declared with `addCallRoute`. */
  streamed: StreamedRoute[];
}

export type RouteHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/** Declare and register one route, with its auth hook and its request counter (returned). */
export function addRoute(
  app: FastifyInstance,
  ctx: RouteContext,
  spec: RouteSpec,
  handler: RouteHandler,
): (status: number) => void {
  ctx.routes.push(spec);
  const auth = authHook(spec.access, ctx.coordinator, ctx.metricsPublic);
  const count = ctx.metrics.requestCounter(spec.method, spec.url);
  // A GET that takes no query parameters says so rather than ignoring one (a misspelt filter).
  const noQuery =
    spec.method === 'GET' && spec.query === undefined
      ? {
          preValidation: async (request: FastifyRequest) => {
            const keys = Object.keys((request.query as Record<string, unknown> | undefined) ?? {});
            if (keys.length === 0) return;
            throw new RouseError(
              'validation_failed',
              `query: ${spec.url} takes no query parameters (got ${keys.join(', ')})`,
              {
                issues: keys.map((k) => ({
                  path: k,
                  message: 'not a parameter of this route',
                  code: 'unrecognized_keys',
                })),
              },
            );
          },
        }
      : {};
  app.route({
    method: spec.method,
    url: spec.url,
    ...(auth ? { onRequest: auth } : {}),
    ...noQuery,
    onResponse: (_request, reply, done) => {
      count(reply.statusCode);
      done();
    },
    ...(spec.bodyLimit === undefined ? {} : { bodyLimit: spec.bodyLimit }),
    handler,
  });
  return count;
}

/**
 * A call of a route written once for both ways in: an HTTP request, or a frame of the call stream
 * (`call-stream.ts`). What the handler sees is the same either way.
 */
export interface RouteCall {
  /** Authenticated, and allowed by the route's access rule. */
  readonly caller: Caller;
  /** The parsed JSON body; undefined when there was none. */
  readonly body: unknown;
  /** A path parameter, decoded. */
  param(name: string): string;
  /** Aborted when the caller stops waiting: its connection closed, or it cancelled the call. */
  signal(): AbortSignal;
  /** Answer with this 2xx status instead of the route's `successStatus`. */
  status(code: number): void;
}

export type CallHandler = (call: RouteCall) => Promise<unknown>;

/** A route of the call stream. */
export interface StreamedRoute {
  spec: RouteSpec;
  handler: CallHandler;
  /** Counts an answer in the route's request counter (the same series as its HTTP requests). */
  count: (status: number) => void;
}

/**
 * Declare and register a route that is also served on the call stream. Its handler gets a
 * {@link RouteCall}, so nothing in it can depend on the transport.
 */
export function addCallRoute(
  app: FastifyInstance,
  ctx: RouteContext,
  spec: RouteSpec,
  handler: CallHandler,
): void {
  const success = spec.successStatus ?? 200;
  const count = addRoute(app, ctx, spec, async (request, reply) => {
    let status = success;
    let signal: AbortSignal | undefined;
    const payload = await handler({
      caller: callerOf(request),
      body: request.body,
      param: (name) => param(request, name),
      signal: () => {
        signal ??= abortOnDisconnect(reply);
        return signal;
      },
      status: (code) => {
        status = code;
      },
    });
    return reply.code(status).send(payload);
  });
  ctx.streamed.push({ spec, handler, count });
}

/** Aborted when the client goes away before its answer is written (a long-poll stops waiting). */
export function abortOnDisconnect(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const res = reply.raw;
  const onClose = () => {
    if (!res.writableEnded) controller.abort();
  };
  res.once('close', onClose);
  return controller.signal;
}

/** The authenticated caller (set by the auth hook on every non-public route). */
export function callerOf(request: FastifyRequest): Caller {
  const caller = request.caller;
  if (!caller) throw new RouseError('unauthorized', 'this route needs a bearer token', {});
  return caller;
}

/** A path parameter (always present on a matched route). */
export function param(request: FastifyRequest, name: string): string {
  return (request.params as Record<string, string>)[name] ?? '';
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook; null on public routes. */
    caller: Caller | null;
  }
}
