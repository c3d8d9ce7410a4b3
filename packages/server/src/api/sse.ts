/**
 * Server-sent events over a raw reply stream (no plugin): `event:`/`id:`/`data:` frames, comment
 * keep-alives, disconnect detection, and a hub that ends every open stream when the app closes.
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
}

export interface SseOptions {
  keepAliveMs: number;
  /** Disconnect a client that has this many bytes waiting in its buffer. */
  maxBufferedBytes: number;
}

/** Tracks open streams so that closing the app ends them instead of waiting on them. */
export class SseHub {
  private readonly streams = new Set<SseStream>();

  constructor(
    private readonly options: SseOptions,
    private readonly metrics: ApiMetrics,
  ) {}

  /**
   * Take over the reply and start an event stream. A `HEAD` request gets the stream's status and
   * headers and the reply ends: the stream returned is already closed (check `closed`).
   */
  open(reply: FastifyReply): SseStream {
    reply.hijack();
    if (reply.request.method === 'HEAD') {
      reply.raw.writeHead(200, SSE_HEADERS);
      reply.raw.end();
      return closedStream();
    }
    const stream = startStream(reply.raw, this.options, () => {
      this.streams.delete(stream);
      this.metrics.sseClients--;
    });
    this.streams.add(stream);
    this.metrics.sseClients++;
    return stream;
  }

  closeAll(): void {
    for (const s of [...this.streams]) s.close();
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
  };
}
