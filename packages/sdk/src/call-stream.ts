/**
 * The call stream's client side (protocol: `@rouse/protocol`'s `call-stream.ts`): a {@link Send} that
 * carries the hot calls (creates, claims, heartbeats, completions) as frames over one upgraded
 * connection per token, and every other request over HTTP. A call's answer is the same status and
 * body its HTTP request gets, so everything above the `Send` (errors, retries) is unchanged.
 *
 * - The stream is opened at the first streamed call of a token; calls made meanwhile wait for it.
 * - A coordinator that does not upgrade (an older one, or a proxy in between that does not pass
 *   `Upgrade`) is remembered: from then on every call is HTTP. A refused token (401/403), a limit
 *   (408/429) or a server error (5xx, e.g. a coordinator shutting down or restarting behind a proxy)
 *   is not remembered: that call goes over HTTP and gets HTTP's answer.
 * - A stream that closes fails its calls in flight like a reset connection (`ECONNRESET`); the next
 *   call opens a new one. A stream with no call in flight does not keep the process alive, and is
 *   closed after {@link IDLE_CLOSE_MS} without calls (before the coordinator would end it).
 * - A call whose body is larger than {@link MAX_STREAMED_BODY_BYTES} goes over HTTP.
 * - Per-call timeouts and abort signals work as over HTTP; the coordinator is told (a cancel frame),
 *   so a long-poll it holds stops waiting.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import {
  ANSWER_HEADER_BYTES,
  CALL_FRAME,
  CALL_HEADER_BYTES,
  CALL_STREAM_PATH,
  CALL_STREAM_PROTOCOL,
  FrameReader,
  readU32,
  STREAMED_ROUTES,
} from '@rouse/protocol';
import { type RawResponse, type Send, SendTimeout, TCP_KEEPALIVE_DELAY_MS } from './http-send.js';

/** A stream without calls for this long is closed by the client. */
export const IDLE_CLOSE_MS = 30_000;
/**
 * Calls with a larger body go over HTTP: the stream saves a per-call cost that such a body dwarfs,
 * and a long frame would hold up the small calls queued behind it (heartbeats).
 */
export const MAX_STREAMED_BODY_BYTES = 64 * 1024;
/** An answer frame's fields before its body, after the length prefix: id, status. */
const ANSWER_FIELD_BYTES = ANSWER_HEADER_BYTES - 4;
/** A cancel frame's fields after the length prefix: id, kind. */
const CANCEL_FIELD_BYTES = 4 + 1;
/** The largest answer accepted (a batch of 10,000 created tasks is about 9 MB). */
const MAX_ANSWER_BYTES = 256 * 1024 * 1024;

const ROUTES = STREAMED_ROUTES.map((r) => {
  const [method, pattern] = r.split(' ') as [string, string];
  return { method, re: new RegExp(`^${pattern.replace(/:[A-Za-z]+/g, '[^/?#]+')}$`) };
});

/** True when `method path` (no query) is one of the routes the call stream carries. */
export function isStreamed(method: string, path: string): boolean {
  return ROUTES.some((r) => r.method === method && r.re.test(path));
}

/** Answers to an upgrade that say nothing about whether the coordinator streams. */
const TRANSIENT = new Set([401, 403, 408, 429]);

/** The connection was lost with calls in flight (mapped like a reset HTTP connection). */
class StreamClosedError extends Error {
  readonly code = 'ECONNRESET';
  constructor(message: string) {
    super(message);
  }
}

/** Per token: the open (or opening) stream, or `http` once the coordinator declined to upgrade. */
type StreamState = { opening: Promise<CallConnection | 'http'> } | { open: CallConnection } | 'http';

/**
 * A {@link Send} that sends streamed routes over a call stream and everything else with `http`.
 * `baseUrl` must be the coordinator's root (a URL with a path prefix goes through a proxy whose
 * routing is unknown: everything stays HTTP).
 */
export function createCallStreamSend(baseUrl: string, http: Send): Send {
  const base = new URL(baseUrl);
  const origin = base.origin;
  const https = base.protocol === 'https:';
  const usable = base.pathname === '/' || base.pathname === '';
  const streams = new Map<string, StreamState>();

  const open = (auth: string, timeoutMs: number): Promise<CallConnection | 'http'> =>
    new Promise((resolve, reject) => {
      const req = (https ? httpsRequest : httpRequest)(`${origin}${CALL_STREAM_PATH}`, {
        method: 'GET',
        agent: false,
        headers: { authorization: auth, connection: 'Upgrade', upgrade: CALL_STREAM_PROTOCOL },
      });
      const timer = setTimeout(() => {
        req.destroy();
        reject(new SendTimeout());
      }, timeoutMs);
      timer.unref();
      req.on('upgrade', (res: IncomingMessage, socket: Socket, head: Buffer) => {
        clearTimeout(timer);
        if (res.statusCode !== 101) {
          socket.destroy();
          resolve('http');
          return;
        }
        const connection = new CallConnection(socket, () => {
          const state = streams.get(auth);
          if (typeof state === 'object' && 'open' in state && state.open === connection) streams.delete(auth);
        });
        streams.set(auth, { open: connection });
        if (head.length > 0) connection.receive(head);
        resolve(connection);
      });
      req.on('response', (res: IncomingMessage) => {
        clearTimeout(timer);
        res.resume();
        // An answer about the route (404, 400, 405, …): not a coordinator that streams, or not through
        // whatever is in between: HTTP from now on. A refused token, a limit or a server error says
        // nothing about that (the coordinator may be restarting behind a proxy): not remembered.
        const status = res.statusCode ?? 0;
        if (status < 500 && !TRANSIENT.has(status)) streams.set(auth, 'http');
        else streams.delete(auth);
        resolve('http');
      });
      req.on('error', (err) => {
        clearTimeout(timer);
        streams.delete(auth);
        reject(err);
      });
      req.end();
    });

  const connection = async (auth: string, timeoutMs: number): Promise<CallConnection | 'http'> => {
    const state = streams.get(auth);
    if (state === 'http') return 'http';
    if (state !== undefined && 'open' in state) return state.open;
    if (state !== undefined) return state.opening;
    const opening = open(auth, timeoutMs);
    streams.set(auth, { opening });
    return opening;
  };

  const send: Send = async (method, url, headers, body, timeoutMs, signal) => {
    const auth = headers.authorization;
    const path = url.startsWith(origin) ? url.slice(origin.length) : '';
    const bodyBytes = body === undefined ? 0 : Buffer.byteLength(body);
    if (
      !usable ||
      auth === undefined ||
      !isStreamed(method, path) ||
      streams.get(auth) === 'http' ||
      bodyBytes > MAX_STREAMED_BODY_BYTES
    ) {
      return http(method, url, headers, body, timeoutMs, signal);
    }
    if (signal?.aborted) throw signal.reason;
    const c = await connection(auth, timeoutMs);
    if (c === 'http') return http(method, url, headers, body, timeoutMs, signal);
    return c.call(`${method} ${path}`, body, bodyBytes, timeoutMs, signal);
  };
  send.close = () => {
    for (const state of streams.values())
      if (typeof state === 'object' && 'open' in state) state.open.close();
    for (const [auth, state] of streams) if (state !== 'http') streams.delete(auth);
    http.close?.();
  };
  return send;
}

interface Pending {
  resolve(res: RawResponse): void;
  reject(err: unknown): void;
  timer: NodeJS.Timeout;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/** One open stream: numbered calls, answered in any order. */
class CallConnection {
  private readonly reader = new FrameReader(MAX_ANSWER_BYTES);
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private corked = false;
  private closed = false;
  private readonly idleTimer: NodeJS.Timeout;

  constructor(
    private readonly socket: Socket,
    private readonly onClosed: () => void,
  ) {
    socket.setNoDelay(true);
    socket.setKeepAlive(true, TCP_KEEPALIVE_DELAY_MS);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', () => {}); // 'close' follows and fails what is in flight
    socket.on('close', () => this.fail('the call stream to the coordinator closed'));
    // One timer for the stream's life, restarted each time the stream goes idle.
    this.idleTimer = setTimeout(() => {
      if (this.pending.size === 0) this.close();
    }, IDLE_CLOSE_MS);
    this.idleTimer.unref();
    socket.unref();
  }

  /** Send a call (`bodyBytes`: the body's UTF-8 length) and wait for its answer. */
  call(
    target: string,
    body: string | Buffer | undefined,
    bodyBytes: number,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ) {
    if (this.closed)
      return Promise.reject(new StreamClosedError('the call stream to the coordinator closed'));
    const id = this.nextId;
    this.nextId = this.nextId >= 0xffffffff ? 1 : this.nextId + 1;
    return new Promise<RawResponse>((resolve, reject) => {
      const timer = setTimeout(() => this.abandon(id, new SendTimeout()), timeoutMs);
      timer.unref();
      const onAbort = signal ? () => this.abandon(id, signal.reason) : undefined;
      if (signal && onAbort) signal.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, { resolve, reject, timer, signal, onAbort });
      if (this.pending.size === 1) this.busy();
      this.writeCall(id, target, body, bodyBytes);
    });
  }

  receive(chunk: Buffer): void {
    let frames: Uint8Array[];
    try {
      frames = this.reader.push(chunk);
    } catch {
      this.close();
      return;
    }
    for (const f of frames) {
      if (f.length < ANSWER_FIELD_BYTES) {
        this.close();
        return;
      }
      const bytes = Buffer.from(f.buffer, f.byteOffset, f.length);
      const p = this.settle(readU32(bytes, 0));
      p?.resolve({
        status: bytes.readUInt16BE(4),
        contentType: 'application/json',
        body: bytes.subarray(ANSWER_FIELD_BYTES),
      });
    }
  }

  close(): void {
    this.socket.destroy();
    this.fail('the call stream to the coordinator was closed by the client');
  }

  private writeCall(id: number, target: string, body: string | Buffer | undefined, bodyBytes: number): void {
    const targetBytes = Buffer.byteLength(target);
    // A text body is encoded into the frame; bytes are written after it as they are.
    const inline = typeof body === 'string' ? bodyBytes : 0;
    const frame = Buffer.allocUnsafe(CALL_HEADER_BYTES + targetBytes + inline);
    frame.writeUInt32BE(CALL_HEADER_BYTES - 4 + targetBytes + bodyBytes, 0);
    frame.writeUInt32BE(id, 4);
    frame[8] = CALL_FRAME.call;
    frame.writeUInt16BE(targetBytes, 9);
    frame.write(target, CALL_HEADER_BYTES, 'utf8');
    if (typeof body === 'string') frame.write(body, CALL_HEADER_BYTES + targetBytes, 'utf8');
    this.write(frame);
    if (Buffer.isBuffer(body)) this.write(body);
  }

  /** Stop waiting for call `id`: fail it with `err` and tell the coordinator. */
  private abandon(id: number, err: unknown): void {
    const p = this.settle(id);
    if (p === undefined) return;
    p.reject(err);
    const frame = Buffer.allocUnsafe(4 + CANCEL_FIELD_BYTES);
    frame.writeUInt32BE(CANCEL_FIELD_BYTES, 0);
    frame.writeUInt32BE(id, 4);
    frame[8] = CALL_FRAME.cancel;
    this.write(frame);
  }

  private settle(id: number): Pending | undefined {
    const p = this.pending.get(id);
    if (p === undefined) return undefined;
    this.pending.delete(id);
    clearTimeout(p.timer);
    if (p.onAbort) p.signal?.removeEventListener('abort', p.onAbort);
    if (this.pending.size === 0) this.idle();
    return p;
  }

  private write(bytes: Buffer): void {
    if (this.closed) return;
    if (!this.corked) {
      // Calls made in the same turn leave in one write.
      this.corked = true;
      this.socket.cork();
      process.nextTick(() => {
        this.corked = false;
        this.socket.uncork();
      });
    }
    this.socket.write(bytes);
  }

  /** Calls in flight: the stream keeps the process alive (the idle timer finds it busy). */
  private busy(): void {
    this.socket.ref();
  }

  /** Nothing in flight: the stream does not keep the process alive, and closes if it stays idle. */
  private idle(): void {
    if (this.closed) return;
    this.socket.unref();
    this.idleTimer.refresh();
  }

  private fail(message: string): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.idleTimer);
    this.onClosed();
    const err = new StreamClosedError(message);
    for (const id of [...this.pending.keys()]) this.settle(id)?.reject(err);
  }
}
