/**
 * Server-sent events over a raw reply stream (no plugin): `event:`/`id:`/`data:` frames, comment
 * keep-alives, disconnect detection, and a hub that ends every open stream when the app closes.
 *
 * A stream outlives the request that authenticated it, so a stream opened with `stillAllowed` is asked
 * again every `recheckMs`: once its token is revoked (an agent that left or registered again) or its
 * dashboard session ended, it ends with a comment saying why. A client that reconnects is then
 * refused as any request with that token would be.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { ApiMetrics } from './metrics.js';

export interface SseStream {
  /** Aborts when the client disconnects or the stream is closed. */
  readonly signal: AbortSignal;
  readonly closed: boolean;
  /** Write one event; `data` is already serialised JSON. Returns false once closed. */
  send(event: string, data: string, id?: string | number): boolean;
  /** Write a comment line (ignored by event readers; visible to humans and tests). */
  comment(text: string): boolean;
  /** End the stream (idempotent). */
  close(): void;
  /**
   * Resolves once the socket has taken what was written (at once when it keeps up), or the stream
   * closed: a producer that paces itself (a log follow reading pages) waits here rather than
   * buffering past `maxBufferedBytes`, which ends the stream.
   */
  writable(): Promise<void>;
}

export interface SseOptions {
  keepAliveMs: number;
  /** How often streams opened with `stillAllowed` are checked again. */
  recheckMs: number;
  /** Disconnect a client that has this many bytes waiting in its buffer. */
  maxBufferedBytes: number;
}

export interface OpenOptions {
  /**
   * Whether the caller may still read this stream (its token or session still valid); false ends
   * the stream. A check that throws (the store briefly unavailable) keeps it.
   */
  stillAllowed?: () => Promise<boolean>;
}

/** Tracks open streams so that closing the app ends them instead of waiting on them. */
export class SseHub {
  private readonly streams = new Set<SseStream>();
  /** The streams to check again, with their checks. */
  private readonly checked = new Map<SseStream, () => Promise<boolean>>();
  private recheckTimer: NodeJS.Timeout | null = null;
  private rechecking = false;

  constructor(
    private readonly options: SseOptions,
    private readonly metrics: ApiMetrics,
  ) {}

  /**
   * Take over the reply and start an event stream. A `HEAD` request gets the stream's status and
   * headers and the reply ends: the stream returned is already closed (check `closed`).
   */
  open(reply: FastifyReply, openOptions: OpenOptions = {}): SseStream {
    reply.hijack();
    if (reply.request.method === 'HEAD') {
      reply.raw.writeHead(200, SSE_HEADERS);
      reply.raw.end();
      return closedStream();
    }
    const stream = startStream(reply.raw, this.options, () => {
      this.streams.delete(stream);
      this.metrics.sseClients--;
      if (this.checked.delete(stream) && this.checked.size === 0) this.stopRechecks();
    });
    this.streams.add(stream);
    this.metrics.sseClients++;
    if (openOptions.stillAllowed !== undefined) {
      this.checked.set(stream, openOptions.stillAllowed);
      // A wire-level cadence, like the keep-alive: how soon a revoked reader stops reading.
      this.recheckTimer ??= setInterval(() => void this.recheck(), this.options.recheckMs);
      this.recheckTimer.unref();
    }
    return stream;
  }

  closeAll(): void {
    for (const s of [...this.streams]) s.close();
  }

  /** Ask every checked stream's check once (one round at a time); end the refused streams. */
  private async recheck(): Promise<void> {
    if (this.rechecking) return;
    this.rechecking = true;
    try {
      await Promise.all(
        [...this.checked].map(async ([stream, stillAllowed]) => {
          const allowed = await stillAllowed().catch(() => true);
          if (allowed || stream.closed) return;
          stream.comment('closed: the token or session that opened this stream is no longer valid');
          stream.close();
        }),
      );
    } finally {
      this.rechecking = false;
    }
  }

  private stopRechecks(): void {
    if (this.recheckTimer !== null) clearInterval(this.recheckTimer);
    this.recheckTimer = null;
  }
}

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
} as const;

/** What `open()` returns for `HEAD`: nothing can be sent on it. */
function closedStream(): SseStream {
  return {
    signal: AbortSignal.abort(),
    closed: true,
    send: () => false,
    comment: () => false,
    close: () => {},
    writable: () => Promise.resolve(),
  };
}

function startStream(res: ServerResponse, options: SseOptions, onClosed: () => void): SseStream {
  const controller = new AbortController();
  let closed = false;
  res.writeHead(200, SSE_HEADERS);
  res.write(': connected\n\n');
  // A wire-level keep-alive, not domain time: it only keeps proxies from closing an idle stream.
  const keepAlive = setInterval(() => write(': keep-alive\n\n'), options.keepAliveMs);
  keepAlive.unref();

  function write(chunk: string): boolean {
    if (closed) return false;
    res.write(chunk);
    if (res.writableLength > options.maxBufferedBytes) {
      close();
      return false;
    }
    return true;
  }

  function finish(): void {
    if (closed) return;
    closed = true;
    clearInterval(keepAlive);
    controller.abort();
    onClosed();
  }

  function close(): void {
    if (closed) return;
    finish();
    res.end();
  }

  res.on('close', finish);
  res.on('error', finish);

  return {
    signal: controller.signal,
    get closed() {
      return closed;
    },
    send(event, data, id) {
      const idLine = id === undefined ? '' : `id: ${id}\n`;
      return write(`event: ${event}\n${idLine}data: ${data}\n\n`);
    },
    comment(text) {
      return write(`: ${text.replace(/[\r\n]+/g, ' ')}\n\n`);
    },
    close,
    writable() {
      if (closed || !res.writableNeedDrain) return Promise.resolve();
      return new Promise((resolve) => {
        const done = (): void => {
          res.off('drain', done);
          controller.signal.removeEventListener('abort', done);
          resolve();
        };
        res.on('drain', done);
        controller.signal.addEventListener('abort', done, { once: true });
      });
    },
  };
}
