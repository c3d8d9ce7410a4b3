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
 * What one connection can hold is bounded: a frame's size (the largest body limit of the routes its
 * token may call, plus the target: 16 MiB for the admin's batches, 1 MiB for anyone else), the calls
 * in flight and their frames' bytes (reading pauses at {@link MAX_CALLS_IN_FLIGHT} or above
 * {@link MAX_IN_FLIGHT_BYTES}), the answers waiting to be written (reading pauses above
 * {@link MAX_UNWRITTEN_BYTES}). A stream that breaks the framing is
 * closed; a stream idle for {@link IDLE_TIMEOUT_MS} with nothing in flight is ended.
 */
import type { IncomingMessage } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import {
  ANSWER_HEADER_BYTES,
  CALL_FRAME,
  CALL_STREAM_PATH,
  CALL_STREAM_PROTOCOL,
  type ErrorBody,
  FrameReader,
  FrameTooLargeError,
  readU32,
} from '@rouse/protocol';
import type { Logger } from 'pino';
import { RouseError } from '../core/errors.js';
import type { Caller, Coordinator } from '../services/coordinator.js';
import { authenticate, bearerToken, checkAccess } from './auth.js';
import {
  BAD_PERCENT_ENCODING,
  badJsonError,
  badPathError,
  bodyTooLargeError,
  errorAnswer,
  errorBody,
  pathParamTooLongError,
} from './error-handler.js';
import { jsonDeeperThan, tooDeepError } from './json-depth.js';
import { jsonReplyBody } from './json-reply.js';
import { MAX_PATH_PARAM_BYTES, type ResolvedApiLimits } from './limits.js';
import { shuttingDownError } from './request-guard.js';
import type { StreamedRoute } from './route-spec.js';

/** Calls one connection may have in flight; it is not read further until one is answered. */
export const MAX_CALLS_IN_FLIGHT = 1024;
/** Frame bytes of the calls in flight above which a connection is not read further. */
export const MAX_IN_FLIGHT_BYTES = 32 * 1024 * 1024;
/** Answer bytes a connection may have waiting to be written before it is not read further. */
export const MAX_UNWRITTEN_BYTES = 8 * 1024 * 1024;
/** A connection with nothing in flight and nothing received for this long is ended (as keep-alive). */
export const IDLE_TIMEOUT_MS = 72_000;
/** The longest call target (`POST /v1/agents/{id}/heartbeat` with the longest id, and room to spare). */
const MAX_TARGET_BYTES = 1024;

/** Fastify's JSON parser (`app.getDefaultJsonParser`), called synchronously. */
export type JsonParser = (
  request: unknown,
  text: string,
  done: (err: Error | null, value?: unknown) => void,
) => void;

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
      4 +
      1 +
      2 +
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
    let token: string;
    let caller: Caller;
    try {
      if (this.closing) {
        throw shuttingDownError();
      }
      token = bearerToken(req.headers.authorization);
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
    const connection = new CallConnection(this, socket, token, maxFrameBytes, () =>
      this.connections.delete(connection),
    );
    this.connections.add(connection);
    if (this.closing) connection.endWhenIdle();
    if (head.length > 0) connection.receive(head);
  }

  /** A call that failed in a way no answer covers (a bug): logged (its connection is cut). */
  lost(err: unknown): void {
    this.options.logger.error({ err }, 'call stream: could not answer a call; the stream is closed');
  }

  /** Answer one call: status and body, as its HTTP request would have been answered. */
  async answer(token: string, target: string, body: Buffer, signal: () => AbortSignal): Promise<Answer> {
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
      return answer;
    }
  }

  private async run(
    route: StreamedRoute,
    params: Record<string, string>,
    method: string,
    token: string,
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
      const text = bytes.toString('utf8');
      if (jsonDeeperThan(text, limits.jsonMaxDepth)) throw tooDeepError(limits.jsonMaxDepth);
      let failed: Error | null = null;
      parseJson(null, text, (err, value) => {
        failed = err;
        body = value;
      });
      if (failed !== null) throw badJsonError();
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

/** A call's answer: its status, and its JSON body as text or bytes. */
interface Answer {
  status: number;
  body: string | Buffer | ErrorBody;
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

/** Answer an upgrade request with an HTTP error and close the connection. */
function refuse(socket: Socket, status: number, body: ErrorBody): void {
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
  );
}

/** One open call stream. */
class CallConnection {
  private readonly reader: FrameReader;
  /** Calls in flight by id: the controller of a call whose handler asked for a signal. */
  private readonly inFlight = new Map<number, AbortController | undefined>();
  /** The frame bytes of the calls in flight. */
  private inFlightBytes = 0;
  private corked = false;
  private paused = false;
  private ending = false;

  constructor(
    private readonly streams: CallStreams,
    private readonly socket: Socket,
    private readonly token: string,
    maxFrameBytes: number,
    onClose: () => void,
  ) {
    this.reader = new FrameReader(maxFrameBytes);
    socket.setNoDelay(true);
    socket.setTimeout(IDLE_TIMEOUT_MS, () => {
      if (this.inFlight.size === 0) socket.end();
    });
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    // The client is done (its SDK closes streams whole): whatever it waits for, it will not read.
    socket.on('end', () => socket.destroy());
    socket.on('drain', () => this.resumeIfRoom());
    socket.on('close', () => {
      for (const controller of this.inFlight.values()) controller?.abort();
      this.inFlight.clear();
      onClose();
    });
  }

  receive(chunk: Buffer): void {
    let frames: Uint8Array[];
    try {
      frames = this.reader.push(chunk);
    } catch (err) {
      if (!(err instanceof FrameTooLargeError)) throw err;
      this.destroy();
      return;
    }
    for (const f of frames) {
      if (this.socket.destroyed) return;
      this.frame(Buffer.from(f.buffer, f.byteOffset, f.length));
    }
  }

  /** End the stream once nothing is in flight (the coordinator is shutting down). */
  endWhenIdle(): void {
    this.ending = true;
    if (this.inFlight.size === 0) this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }

  private frame(f: Buffer): void {
    if (f.length < 5) {
      this.destroy();
      return;
    }
    const id = readU32(f, 0);
    const kind = f[4];
    if (kind === CALL_FRAME.cancel) {
      this.inFlight.get(id)?.abort();
      return;
    }
    const targetBytes = f.length < 7 ? 0 : f.readUInt16BE(5);
    if (
      kind !== CALL_FRAME.call ||
      f.length < 7 + targetBytes ||
      targetBytes > MAX_TARGET_BYTES ||
      id === 0 ||
      this.inFlight.has(id)
    ) {
      // Not a frame of this protocol, or an id that would make answers ambiguous: the stream is lost.
      this.destroy();
      return;
    }
    const target = f.toString('utf8', 7, 7 + targetBytes);
    const body = f.subarray(7 + targetBytes);
    this.inFlight.set(id, undefined);
    this.inFlightBytes += f.length;
    if (this.inFlight.size >= MAX_CALLS_IN_FLIGHT || this.inFlightBytes > MAX_IN_FLIGHT_BYTES) this.pause();
    const signal = (): AbortSignal => {
      let controller = this.inFlight.get(id);
      if (controller === undefined) {
        controller = new AbortController();
        if (this.inFlight.has(id)) this.inFlight.set(id, controller);
        else controller.abort(); // the connection is gone already
      }
      return controller.signal;
    };
    void this.streams
      .answer(this.token, target, body, signal)
      .then((answer) => this.settle(id, f.length, answer))
      .catch((err: unknown) => {
        this.streams.lost(err);
        this.destroy();
      });
  }

  private settle(id: number, frameBytes: number, answer: Answer): void {
    if (!this.inFlight.delete(id) || this.socket.destroyed) return;
    this.inFlightBytes -= frameBytes;
    this.write(id, answer);
    if (this.ending && this.inFlight.size === 0) this.socket.end();
    else this.resumeIfRoom();
  }

  private write(id: number, answer: Answer): void {
    const body =
      typeof answer.body === 'string' || Buffer.isBuffer(answer.body)
        ? answer.body
        : JSON.stringify(answer.body);
    const bodyBytes = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    const small = typeof body === 'string';
    const head = Buffer.allocUnsafe(ANSWER_HEADER_BYTES + (small ? bodyBytes : 0));
    head.writeUInt32BE(ANSWER_HEADER_BYTES - 4 + bodyBytes, 0);
    head.writeUInt32BE(id, 4);
    head.writeUInt16BE(answer.status, 8);
    if (small) head.write(body, ANSWER_HEADER_BYTES);
    if (!this.corked) {
      // Answers ready in the same turn leave in one write.
      this.corked = true;
      this.socket.cork();
      process.nextTick(() => {
        this.corked = false;
        this.socket.uncork();
      });
    }
    this.socket.write(head);
    if (!small) this.socket.write(body);
    if (this.socket.writableLength > MAX_UNWRITTEN_BYTES) this.pause();
  }

  private pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.socket.pause();
  }

  private resumeIfRoom(): void {
    if (!this.paused) return;
    if (
      this.inFlight.size >= MAX_CALLS_IN_FLIGHT ||
      this.inFlightBytes > MAX_IN_FLIGHT_BYTES ||
      this.socket.writableLength > MAX_UNWRITTEN_BYTES
    ) {
      return;
    }
    this.paused = false;
    this.socket.resume();
  }
}
