/**
 * Requests Node's HTTP server refuses before Fastify sees them, answered in the protocol's error
 * shape with `Connection: close` instead of Node's bodiless or Fastify's own answers (or none):
 * - the `clientError` event: a request head over `maxHeaderSize` (431), an invalid `Content-Length`
 *   or `Transfer-Encoding`, a malformed request line or header (400), a request that did not arrive
 *   in time (408);
 * - `checkExpectation`: an `Expect` other than `100-continue` (417);
 * - `connect`: the `CONNECT` method (405; this is no proxy).
 * The close lingers (`unread-body.ts`), so a client still sending reads the answer, not a reset.
 */
import {
  maxHeaderSize as defaultMaxHeaderSize,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorCode } from '@rouse/protocol';
import { errorBody } from './error-handler.js';
import { endAndLinger, isClosingConnection, lingerOnClose } from './unread-body.js';

/** Node's parse errors carry the llhttp code (`HPE_…`) and its reason. */
interface ClientError extends Error {
  code?: string;
  reason?: string;
}

interface Refusal {
  status: number;
  code: ErrorCode;
  message: string;
  details: Record<string, unknown>;
}

export interface WireRefusalOptions {
  lingerMs: number;
}

/** The `clientError` listener (Fastify's `clientErrorHandler` option). */
export function clientErrorHandler(
  options: WireRefusalOptions & { maxHeaderSize: () => number | undefined },
) {
  return (err: ClientError, socket: Socket): void => {
    // A reset connection has nobody to answer; a socket already answered gets the parser's later
    // complaints about the bytes it keeps dropping.
    if (err.code === 'ECONNRESET' || socket.destroyed || isClosingConnection(socket)) return;
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (!socket.writable || inFlight?.headersSent) {
      // Half an answer is on the wire already; another would corrupt it.
      socket.destroy();
      return;
    }
    const refusal = describeClientError(err, options.maxHeaderSize() ?? defaultMaxHeaderSize);
    const body = JSON.stringify(errorBody(refusal.code, refusal.message, refusal.details));
    socket.write(
      `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? 'Error'}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
    endAndLinger(socket, options.lingerMs);
  };
}

/** Answer `Expect` and `CONNECT` requests on `server` in the protocol's shape. */
export function answerUnroutableRequests(server: Server, options: WireRefusalOptions): void {
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const rule = 'only 100-continue is supported';
    lingerOnClose(req.socket, options.lingerMs);
    req.resume();
    const body = JSON.stringify(
      errorBody('validation_failed', `headers.expect: ${rule}`, {
        issues: [{ path: 'headers.expect', message: rule, code: 'unsupported_expectation' }],
      }),
    );
    res.writeHead(417, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    });
    res.end(body);
  });

  server.on('connect', (_req: IncomingMessage, socket: Socket) => {
    const body = JSON.stringify(
      errorBody('method_not_allowed', 'CONNECT is not supported: this is an API, not a proxy', {
        method: 'CONNECT',
      }),
    );
    socket.write(
      'HTTP/1.1 405 Method Not Allowed\r\n' +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
    endAndLinger(socket, options.lingerMs);
  });
}

function describeClientError(err: ClientError, maxHeaderSize: number): Refusal {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        code: 'payload_too_large',
        message: `the request line and headers exceed ${maxHeaderSize} bytes; shorten the URL or the headers`,
        details: { part: 'request head', limitBytes: maxHeaderSize },
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return {
        status: 413,
        code: 'payload_too_large',
        message: 'the chunk extensions of the body are too long; send the body without them',
        details: { part: 'chunk extensions', limitBytes: 16 * 1024 },
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        code: 'validation_failed',
        message: 'the request did not arrive completely in time; send it again',
        details: { issues: [{ path: 'request', message: 'incomplete in time', code: err.code }] },
      };
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return invalid('headers.content-length', 'is not a single valid length', err.code);
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return invalid('headers.transfer-encoding', 'is not valid here', err.code);
    default: {
      const reason = typeof err.reason === 'string' && err.reason !== '' ? err.reason : 'malformed';
      return invalid('request', `is not valid HTTP/1.1 (${reason})`, err.code ?? 'bad_request');
    }
  }
}

function invalid(path: string, rule: string, code: string): Refusal {
  return {
    status: 400,
    code: 'validation_failed',
    message: `${path}: ${rule}`,
    details: { issues: [{ path, message: rule, code }] },
  };
}
