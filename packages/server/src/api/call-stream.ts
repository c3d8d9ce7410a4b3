/**
 * The call stream (protocol: `@rouse/protocol`'s `call-stream.ts`; docs/protocol.md "The call
 * stream"): the routes declared with `addCallRoute` served as frames over one upgraded connection.
 *
 * A call goes through the same steps as its HTTP request, in the same order, with the same errors:
 * refused while the coordinator shuts down, the token checked (every call, as HTTP does every
 * request) and the route's access rule, the route's body limit, the JSON depth bound, the JSON
 * parser Fastify uses (prototype poisoning refused), then the route's own handler. Answers are
 * written as they are ready, several in one write when they are ready in the same turn.
 *
 * A frame may be as long as the largest body limit of the routes its token may call, plus the
 * target: 16 MiB for the admin's batches, 1 MiB for anyone else. What else one connection may hold
 * is bounded in `call-connection.ts`.
 */
import type { IncomingMessage } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { CALL_STREAM_PATH, CALL_STREAM_PROTOCOL, type ErrorBody } from '@rouse/protocol';
import type { Logger } from 'pino';
import { RouseError } from '../core/errors.js';
import { type PresentedToken, presentToken } from '../services/auth.js';
import type { Caller, Coordinator } from '../services/coordinator.js';
import { authenticate, bearerToken, checkAccess } from './auth.js';
import {
  type Answer,
  CALL_FIELD_BYTES,
  CallConnection,
  CLOSE_GRACE_MS,
  endThenCut,
  MAX_TARGET_BYTES,
} from './call-connection.js';
import {
  BAD_PERCENT_ENCODING,
  badPathError,
  bodyTooLargeError,
  errorAnswer,
  errorBody,
  pathParamTooLongError,
} from './error-handler.js';
import { type JsonParser, readJsonBody } from './json-body.js';

import { jsonReplyBody } from './json-reply.js';
import { MAX_PATH_PARAM_BYTES, type ResolvedApiLimits } from './limits.js';
import { shuttingDownError } from './request-guard.js';
import type { StreamedRoute } from './route-spec.js';

export interface CallStreamOptions {
  coordinator: Coordinator;
  limits: ResolvedApiLimits;
  logger: Logger;
  routes: readonly StreamedRoute[];
  parseJson: JsonParser;
}

/** A route's path split into literal segments and parameter names. */
interface Matcher {
  route: StreamedRoute;
  method: string;
  segments: { literal: string | null; name: string | null }[];
}

/** The open call streams of one app. */
export class CallStreams {
  private readonly connections = new Set<CallConnection>();
  private readonly matchers: Matcher[];
  /** The longest frame, for the admin token and for any other (who may not call the admin's routes). */
  private readonly maxFrameBytes: { admin: number; other: number };
  private closing = false;
  private openedCount = 0;

  constructor(private readonly options: CallStreamOptions) {
    this.matchers = options.routes.map((route) => ({
      route,
      method: route.spec.method,
      segments: route.spec.url
        .split('/')
        .map((s) => (s.startsWith(':') ? { literal: null, name: s.slice(1) } : { literal: s, name: null })),
    }));
    const frame = (routes: readonly StreamedRoute[]) =>
      Math.max(0, ...routes.map((r) => r.spec.bodyLimit ?? options.limits.jsonBodyBytes)) +
      CALL_FIELD_BYTES +
      MAX_TARGET_BYTES;
    this.maxFrameBytes = {
      admin: frame(options.routes),
      other: frame(options.routes.filter((r) => r.spec.access !== 'admin')),
    };
  }

  /** The routes served, as `METHOD /path/:param`. */
  get routes(): string[] {
    return this.matchers.map((m) => `${m.method} ${m.route.spec.url}`);
  }

  /** Open streams (tests and metrics). */
  get size(): number {
    return this.connections.size;
  }

  /** Streams opened since the start (metrics). */
  get opened(): number {
    return this.openedCount;
  }

  /** The HTTP server's `upgrade` listener. */
  readonly onUpgrade = (req: IncomingMessage, socket: Socket, head: Buffer): void => {
    socket.on('error', () => socket.destroy());
    void this.upgrade(req, socket, head).catch((err: unknown) => {
      this.options.logger.error({ err }, 'call stream: upgrade failed');
      socket.destroy();
    });
  };

  /** Take no more calls: each stream ends once the calls it has in flight are answered. */
  close(): void {
    this.closing = true;
    for (const c of this.connections) c.endWhenIdle();
  }

  /** Cut every stream now (the shutdown's grace period is over). */
  destroyAll(): void {
    for (const c of this.connections) c.destroy();
  }

  private async upgrade(req: IncomingMessage, socket: Socket, head: Buffer): Promise<void> {
    const path = (req.url ?? '').split('?')[0];
    if (path !== CALL_STREAM_PATH) {
      refuse(
        socket,
        404,
        errorBody('not_found', `no upgrade at ${path}; the call stream is at GET ${CALL_STREAM_PATH}`, {
          kind: 'route',
        }),
      );
      return;
    }
    const protocol = (req.headers.upgrade ?? '').toLowerCase();
    if (req.method !== 'GET' || protocol !== CALL_STREAM_PROTOCOL) {
      const rule = `must be GET with "Upgrade: ${CALL_STREAM_PROTOCOL}"`;
      refuse(
        socket,
        400,
        errorBody('validation_failed', `${CALL_STREAM_PATH}: ${rule}`, {
          issues: [{ path: 'headers.upgrade', message: rule, code: 'bad_upgrade' }],
        }),
      );
      return;
    }
    let token: PresentedToken;
    let caller: Caller;
    try {
      if (this.closing) {
        throw shuttingDownError();
      }
      // Hashed once for the stream's life; every call is still authenticated with it.
      token = presentToken(bearerToken(req.headers.authorization));
      caller = await authenticate(this.options.coordinator, token);
    } catch (err) {
      const answer = this.errorAnswer(err, 'GET', CALL_STREAM_PATH);
      refuse(socket, answer.status, answer.body);
      return;
    }
    if (socket.destroyed) return;
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${CALL_STREAM_PROTOCOL}\r\nConnection: Upgrade\r\n\r\n`,
    );
    const maxFrameBytes = caller.kind === 'admin' ? this.maxFrameBytes.admin : this.maxFrameBytes.other;
    const connection = new CallConnection(
      socket,
      maxFrameBytes,
      (target, body, signal) => this.answer(token, target, body, signal),
      (err) => this.lost(err),
      () => this.connections.delete(connection),
    );
    this.connections.add(connection);
    this.openedCount++;
    if (this.closing) connection.endWhenIdle();
    if (head.length > 0) connection.receive(head);
  }

  /** A call that failed in a way no answer covers (a bug): logged (its connection is cut). */
  private lost(err: unknown): void {
    this.options.logger.error({ err }, 'call stream: could not answer a call; the stream is closed');
  }

  /** Answer one call: status and body, as its HTTP request would have been answered. */
  private async answer(
    token: PresentedToken,
    target: string,
    body: Buffer,
    signal: () => AbortSignal,
  ): Promise<Answer> {
    const space = target.indexOf(' ');
    const method = target.slice(0, space);
    const path = target.slice(space + 1);
    let route: StreamedRoute | undefined;
    try {
      if (this.closing) {
        throw shuttingDownError();
      }
      const found = space > 0 ? this.match(method, path) : null;
      if (found === null) {
        throw new RouseError(
          'not_found',
          `no route ${target.slice(0, 200)} on the call stream; send it as an HTTP request (see GET /v1/openapi.json)`,
          { kind: 'route' },
        );
      }
      route = found.route;
      const answer = await this.run(found.route, found.params, method, token, body, signal);
      route.count(answer.status);
      return answer;
    } catch (err) {
      const answer = this.errorAnswer(err, method, path);
      route?.count(answer.status);
      return { status: answer.status, body: JSON.stringify(answer.body) };
    }
  }

  private async run(
    route: StreamedRoute,
    params: Record<string, string>,
    method: string,
    token: PresentedToken,
    bytes: Buffer,
    signal: () => AbortSignal,
  ): Promise<Answer> {
    const { coordinator, limits, parseJson } = this.options;
    const caller = await authenticate(coordinator, token);
    checkAccess(route.spec.access, caller, { method, params });
    const limitBytes = route.spec.bodyLimit ?? limits.jsonBodyBytes;
    if (bytes.length > limitBytes) throw bodyTooLargeError(limitBytes);
    let body: unknown;
    if (bytes.length > 0) {
      body = readJsonBody(parseJson, null, bytes.toString('utf8'), limits.jsonMaxDepth);
    }
    let status = route.spec.successStatus ?? 200;
    const payload = await route.handler({
      caller,
      body,
      param: (name) => params[name] ?? '',
      signal,
      status: (code) => {
        status = code;
      },
    });
    // A handler that answers nothing answers an empty body (as Fastify sends it).
    return { status, body: payload === undefined ? '' : jsonReplyBody(payload) };
  }

  /** The route and decoded parameters of `method path`, or null. Throws for a bad parameter. */
  private match(
    method: string,
    path: string,
  ): { route: StreamedRoute; params: Record<string, string> } | null {
    const parts = path.split('/');
    for (const m of this.matchers) {
      if (m.method !== method || m.segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < parts.length && ok; i++) {
        const seg = m.segments[i]!;
        const part = parts[i]!;
        if (seg.literal !== null) ok = seg.literal === part;
        else if (part === '') ok = false;
        else params[seg.name!] = decodeParam(part, path);
      }
      if (ok) return { route: m.route, params };
    }
    return null;
  }

  private errorAnswer(err: unknown, method: string, url: string): { status: number; body: ErrorBody } {
    return errorAnswer(err, err instanceof RouseError ? err : null, this.options.logger, { method, url });
  }
}

/** A path parameter, percent-decoded, refused as HTTP refuses it (too long, not UTF-8). */
function decodeParam(raw: string, path: string): string {
  if (raw.length > MAX_PATH_PARAM_BYTES) throw pathParamTooLongError();
  try {
    return decodeURIComponent(raw);
  } catch {
    throw badPathError(BAD_PERCENT_ENCODING, 'FST_ERR_BAD_URL', path);
  }
}

/** Answer an upgrade request with an HTTP error and close the connection (cut if the client keeps it). */
function refuse(socket: Socket, status: number, body: ErrorBody): void {
  const text = JSON.stringify(body);
  endThenCut(
    socket,
    CLOSE_GRACE_MS,
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
  );
}
