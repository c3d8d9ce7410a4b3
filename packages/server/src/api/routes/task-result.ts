/**
 * Results: `GET /v1/tasks/{id}/result` (inline JSON, or the stored blob streamed with its content
 * type) and `PUT /v1/tasks/{id}/result?version=N` (any content type, streamed to the blob store and
 * cut off at the upload limit). Task blobs, the same way: `PUT /v1/tasks/{id}/blobs?version=N` (the
 * holder stores bytes for the task, e.g. a session transcript) and `GET /v1/tasks/{id}/blobs/{blobId}`.
 */
import { Transform, type TransformCallback } from 'node:stream';
import * as schemas from '@rouse/protocol/schemas';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotFoundError, RouseError } from '../../core/errors.js';
import { addRoute, callerOf, param, type RouteContext } from '../route-spec.js';
import { parseInput } from '../validate.js';

/**
 * Stored bodies are served with the content type their agent gave: a browser must not guess another
 * (`nosniff`), nor run what it renders (`sandbox`: a stored `text/html` page has no scripts and no
 * origin of its own).
 */
const STORED_CONTENT_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': 'sandbox',
} as const;

export function registerTaskResultRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { coordinator } = ctx;

  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/tasks/:id/result',
      access: 'read',
      summary: 'The inline result (JSON) or the uploaded blob (its own content type)',
      produces: ['*/*'],
    },
    async (request, reply) => {
      const id = param(request, 'id');
      const stored = await coordinator.getResult(callerOf(request), id);
      if (stored.blob) {
        const { ref, stream } = stored.blob;
        return reply
          .type(ref.contentType)
          .headers(STORED_CONTENT_HEADERS)
          .header('content-length', ref.sizeBytes)
          .header('x-rouse-result-sha256', ref.sha256)
          .send(stream);
      }
      if (stored.inline === undefined) throw new NotFoundError('result', id);
      return reply.type('application/json; charset=utf-8').send(JSON.stringify(stored.inline));
    },
  );

  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/tasks/:id/blobs/:blobId',
      access: 'read',
      summary:
        "A blob stored for the task (its own content type); the task's current holder, admin or read-only",
      produces: ['*/*'],
    },
    async (request, reply) => {
      const { ref, stream } = await coordinator.getTaskBlob(
        callerOf(request),
        param(request, 'id'),
        param(request, 'blobId'),
      );
      return reply
        .type(ref.contentType)
        .headers(STORED_CONTENT_HEADERS)
        .header('content-length', ref.bytes)
        .header('x-rouse-blob-sha256', ref.sha256)
        .send(stream);
    },
  );

  // The upload route gets its own scope so that its catch-all parser (the raw body stream) does not
  // replace JSON parsing anywhere else.
  app.register(async (scope) => {
    const limitBytes = ctx.limits.resultUploadBytes;
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { bodyLimit: limitBytes }, (request, payload, done) => {
      const declared = Number(request.headers['content-length']);
      if (declared > limitBytes) {
        done(tooLarge(limitBytes), undefined);
        return;
      }
      const limited = new ByteLimit(limitBytes);
      // Not pipeline(): when the limiter fails it would destroy the request, and with it the socket,
      // before the 413 is written. A refusal drops the unread rest instead (`unread-body.ts`).
      payload.pipe(limited);
      // The client going away fails the upload. A limiter nobody reads (the upload was refused
      // before its body was read) must not turn that into an unhandled 'error'.
      payload.once('error', (err) => limited.destroy(err));
      limited.on('error', () => {});
      done(null, limited);
    });

    addRoute(
      scope,
      ctx,
      {
        method: 'PUT',
        url: '/v1/tasks/:id/result',
        access: 'holder',
        summary: 'Upload a large result as a blob (any content type); complete the task afterwards',
        query: schemas.versionQuery,
        queryName: 'VersionQuery',
        consumes: ['*/*'],
        bodyLimit: limitBytes,
      },
      async (request: FastifyRequest) => {
        const u = uploadOf(request);
        const resultRef = await coordinator.uploadResult(u.caller, u.id, u.version, u.contentType, u.body);
        return { resultRef };
      },
    );

    addRoute(
      scope,
      ctx,
      {
        method: 'PUT',
        url: '/v1/tasks/:id/blobs',
        access: 'holder',
        summary:
          'Store bytes for the task (any content type), e.g. a session transcript for the next attempt',
        query: schemas.versionQuery,
        queryName: 'VersionQuery',
        consumes: ['*/*'],
        bodyLimit: limitBytes,
      },
      async (request: FastifyRequest) => {
        const u = uploadOf(request);
        const blobRef = await coordinator.uploadTaskBlob(u.caller, u.id, u.version, u.contentType, u.body);
        return { blobRef };
      },
    );
  });
}

function tooLarge(limitBytes: number): RouseError {
  return new RouseError('payload_too_large', `the result exceeds the upload limit of ${limitBytes} bytes`, {
    limitBytes,
  });
}

/** Passes bytes through and fails with `payload_too_large` past the limit. */
class ByteLimit extends Transform {
  private seen = 0;

  constructor(private readonly limitBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.limitBytes) callback(tooLarge(this.limitBytes));
    else callback(null, chunk);
  }
}

/** What a byte upload for a task says: who, which task, the attempt's version, the bytes and their type. */
function uploadOf(request: FastifyRequest) {
  const { version } = parseInput(schemas.versionQuery, request.query ?? {}, 'query');
  return {
    caller: callerOf(request),
    id: param(request, 'id'),
    version,
    contentType: request.headers['content-type'] ?? 'application/octet-stream',
    body: (request.body as ByteLimit | undefined) ?? Buffer.alloc(0),
  };
}
