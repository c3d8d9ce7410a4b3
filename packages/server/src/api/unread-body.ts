/**
 * What becomes of a request body that a refusal leaves unread (an auth failure, a bad query, an
 * unknown task or a stale version on a result upload, a body over its limit), and of connections
 * the server decides to close.
 *
 * - A small rest (no more than a JSON body may hold) is read and dropped, and the keep-alive
 *   connection serves the next request.
 * - A larger or unknown rest (up to 256 MiB on a result upload) is not worth reading: the answer
 *   carries `Connection: close`. Node would then destroy the socket as soon as the answer is flushed,
 *   and a socket destroyed with unread bytes sends RST, which makes a client still writing its body
 *   lose the answer (EPIPE, ECONNRESET). So the close lingers: FIN after the answer, the rest of the
 *   body is read and dropped until the client closes its side, and only after `lingerMs` is the
 *   socket cut.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Sockets whose close is lingering: no request read from them any more is served. */
const closingSockets = new WeakSet<Socket>();

export interface UnreadBodyOptions {
  /** A declared body up to this size is read and dropped; the connection stays open. */
  drainBytes: number;
  lingerMs: number;
}

/**
 * Call before sending a refusal: if the request body is not (fully) read, drop the rest, and when
 * that rest may be large, close the connection after the answer (lingering, as above).
 */
export function settleUnreadBody(
  request: FastifyRequest,
  reply: FastifyReply,
  options: UnreadBodyOptions,
): void {
  const req = request.raw;
  if (!hasUnreadBody(req) || reply.raw.headersSent) return;
  const declared = Number(req.headers['content-length']);
  const closing = String(reply.getHeader('connection') ?? '').toLowerCase() === 'close';
  dropBody(req);
  if (!closing && Number.isSafeInteger(declared) && declared <= options.drainBytes) return;
  reply.header('connection', 'close');
  lingerOnClose(req.socket, options.lingerMs);
}

/** True once the server decided to close this connection: later requests on it are not served. */
export function isClosingConnection(socket: Socket | null | undefined): boolean {
  return socket != null && closingSockets.has(socket);
}

/**
 * Replace the socket's end-of-response close (`destroySoon`, called by Node once a `Connection:
 * close` answer is flushed) with a lingering one.
 */
export function lingerOnClose(socket: Socket, lingerMs: number): void {
  if (closingSockets.has(socket)) return;
  closingSockets.add(socket);
  socket.destroySoon = () => endAndLinger(socket, lingerMs);
}

/** FIN after what is written; destroy once the client has closed its side too, or after `lingerMs`. */
export function endAndLinger(socket: Socket, lingerMs: number): void {
  closingSockets.add(socket);
  if (socket.destroyed) return;
  socket.end();
  // Never before the answer is flushed: a client that half-closed early still reads it.
  const destroyWhenFlushed = () => {
    clearTimeout(timer);
    if (socket.writableFinished) socket.destroy();
    else socket.once('finish', () => socket.destroy());
  };
  // A socket-level bound, not domain time: it only caps how long a refused client may keep sending.
  const timer = setTimeout(() => socket.destroy(), lingerMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  if (socket.readableEnded) {
    destroyWhenFlushed();
    return;
  }
  socket.once('end', destroyWhenFlushed);
  // Read to the end even if nothing else does (the parser may be paused on a full request buffer).
  socket.resume();
}

/**
 * Whether body bytes may still be on their way. `complete` alone is not enough: a request without a
 * body is only marked complete after its handler started.
 */
function hasUnreadBody(req: IncomingMessage): boolean {
  if (req.complete || req.destroyed) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) !== 0);
}

/** Stop whatever was reading the body and drop the rest as it arrives. */
function dropBody(req: IncomingMessage): void {
  req.unpipe();
  req.removeAllListeners('data');
  req.resume();
}
