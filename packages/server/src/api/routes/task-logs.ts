/**
 * `GET /v1/tasks/{id}/logs?after=<seq>`: JSON `{lines}`, or with `Accept: text/event-stream` a follow
 * stream: the lines after `after` (or `Last-Event-ID`), then new lines as they arrive, until the task
 * is final and every line was sent, or the client goes away. Every `data:` is one log line (`event: log`,
 * `id: <seq>`); the end of the stream and errors are comment lines, so readers see only lines.
 */
import * as schemas from '@rouse/protocol/schemas';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RouseError } from '../../core/errors.js';
import type { Caller } from '../../services/coordinator.js';
import { stillAuthenticated } from '../auth.js';
import { addRoute, callerOf, param, type RouteContext } from '../route-spec.js';
import type { SseStream } from '../sse.js';
import { parseInput } from '../validate.js';

export function registerTaskLogRoutes(app: FastifyInstance, ctx: RouteContext): void {
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/tasks/:id/logs',
      access: 'read',
      summary: 'Log lines after a sequence number; follows as SSE with Accept: text/event-stream',
      query: schemas.logsQuery,
      queryName: 'LogsQuery',
      produces: ['text/event-stream'],
    },
    async (request, reply) => {
      const id = param(request, 'id');
      const caller = callerOf(request);
      const { after } = parseInput(schemas.logsQuery, request.query ?? {}, 'query');
      if (!wantsEventStream(request)) return ctx.coordinator.readLogs(caller, id, after ?? 0);
      const from = after ?? lastEventId(request) ?? 0;
      // Fail before taking over the reply, so an unknown task is a plain 404.
      await ctx.coordinator.getTask(caller, id);
      return follow(ctx, reply, caller, id, from, stillAuthenticated(ctx.coordinator, request, caller));
    },
  );
}

async function follow(
  ctx: RouteContext,
  reply: FastifyReply,
  caller: Caller,
  id: string,
  from: number,
  stillAllowed: () => Promise<boolean>,
) {
  const { coordinator } = ctx;
  const stream = ctx.sse.open(reply, { stillAllowed });
  let after = from;
  try {
    while (!stream.closed) {
      const page = await coordinator.readLogs(caller, id, after);
      if (sendLines(stream, page.lines)) {
        after = page.lines[page.lines.length - 1]?.seq ?? after;
        // Paced by the reader: a long log is sent as fast as the client takes it, never dropped.
        await stream.writable();
        continue;
      }
      const task = await coordinator.getTask(caller, id);
      if (task.final) {
        // No line can be appended once final; one more read drains a line written before the change.
        const last = await coordinator.readLogs(caller, id, after);
        sendLines(stream, last.lines);
        stream.comment(`end: task ${id} is ${task.status}`);
        break;
      }
      await coordinator.waitForLogs(id, after, stream.signal);
    }
  } catch (err) {
    if (!stream.closed) {
      // Only our own errors are described to the client; anything else is logged, not echoed.
      const known = err instanceof RouseError;
      stream.comment(known ? `error: ${err.code}: ${err.message}` : 'error: internal: the log stream failed');
      ctx.logger.warn({ err, taskId: id }, 'log follow stream ended by an error');
    }
  } finally {
    stream.close();
  }
}

/** Write lines; true when there were any. */
function sendLines(stream: SseStream, lines: { seq: number }[]): boolean {
  for (const line of lines) stream.send('log', JSON.stringify(line), line.seq);
  return lines.length > 0;
}

function wantsEventStream(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').includes('text/event-stream');
}

function lastEventId(request: FastifyRequest): number | undefined {
  const raw = request.headers['last-event-id'];
  const n = typeof raw === 'string' ? Number(raw) : Number.NaN;
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}
