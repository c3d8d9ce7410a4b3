/**
 * The first hook every request passes (app-wide `onRequest`), for what no route should see:
 * - a request read from a connection the server is already closing (it answered an earlier request
 *   with `Connection: close`, `unread-body.ts`) is not served: the client was told no answer comes;
 * - while the app closes, a request that still arrives on an open connection is `503 unavailable`
 *   (Fastify's own 503 for this is not in the protocol's shape, so it is turned off);
 * - an HTTP/1.1 request without `Host` is `400 validation_failed` (RFC 9112 §3.2; Node's own check
 *   answers without a body, so it is turned off too).
 */
import type { onRequestHookHandler } from 'fastify';
import { RouseError, UnavailableError } from '../core/errors.js';
import { isClosingConnection } from './unread-body.js';

/** A request (or call) that arrives while the coordinator shuts down. */
export function shuttingDownError(): UnavailableError {
  // Refused before anything was done: any call, even one that must not run twice, may be sent again.
  return new UnavailableError(
    'this coordinator is shutting down; retry, on another coordinator if there is one',
    { applied: false },
  );
}

/** `appClosing()` turns true when the app starts to close. */
export function requestGuard(appClosing: () => boolean): onRequestHookHandler {
  return (request, reply, done) => {
    const req = request.raw;
    if (isClosingConnection(req.socket)) {
      req.resume();
      reply.hijack();
      return;
    }
    if (appClosing()) {
      done(shuttingDownError());
      return;
    }
    if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 1) {
      const rule = 'is required in HTTP/1.1';
      done(
        new RouseError('validation_failed', `headers.host: ${rule}`, {
          issues: [{ path: 'headers.host', message: rule, code: 'missing_host' }],
        }),
      );
      return;
    }
    done();
  };
}
