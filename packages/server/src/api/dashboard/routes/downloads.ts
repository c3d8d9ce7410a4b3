/** The data the pages link to: a task's JSON parts, its result, an agent's snapshot, and followed logs. */
import { logLines } from '@rouse/dashboard';
import type { Json } from '@rouse/protocol';
import { RouseError } from '../../../core/errors.js';
import type { Site } from '../site.js';

const LOG_WAIT_MS = 25_000;

export function registerDownloads(site: Site): void {
  const { scope, coordinator, requireSession } = site;

  // ---- data the pages link to ----
  scope.get('/tasks/:id/json/:part', async (request, reply) => {
    const session = await requireSession(request);
    const { id, part } = request.params as { id: string; part: string };
    const task = await coordinator.getTask(session.caller, id);
    const parts: Record<string, Json | undefined> = {
      payload: task.payload,
      result: task.result,
      checkpoint: task.checkpoint,
      session: task.session,
    };
    if (!(part in parts))
      throw new RouseError('not_found', `no part ${part}; payload, result, checkpoint or session`, {});
    return reply
      .header('content-disposition', `attachment; filename="${id}-${part}.json"`)
      .type('application/json; charset=utf-8')
      .send(JSON.stringify(parts[part] ?? null, null, 2));
  });

  scope.get('/tasks/:id/result', async (request, reply) => {
    const session = await requireSession(request);
    const id = (request.params as { id: string }).id;
    const stored = await coordinator.getResult(session.caller, id);
    reply.header('content-disposition', `attachment; filename="${id}-result"`);
    // Sent as a download of bytes whatever its type: an uploaded text/html must not render here.
    if (stored.blob) return reply.type('application/octet-stream').send(stored.blob.stream);
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(stored.inline ?? null, null, 2));
  });

  scope.get('/agents/:id/json/snapshot', async (request, reply) => {
    const session = await requireSession(request);
    const id = (request.params as { id: string }).id;
    const snapshot = await coordinator.getSnapshot(session.caller, id);
    return reply
      .header('content-disposition', `attachment; filename="${id}-snapshot.json"`)
      .type('application/json; charset=utf-8')
      .send(JSON.stringify(snapshot.state, null, 2));
  });

  /** The log lines after `after`, waiting up to 25 s for one while the task runs (the page follows with it). */
  scope.get('/tasks/:id/logs', async (request) => {
    const session = await requireSession(request);
    const id = (request.params as { id: string }).id;
    const after = Number((request.query as Record<string, unknown>).after ?? 0);
    if (!Number.isInteger(after) || after < 0)
      throw new RouseError('validation_failed', 'after: an integer >= 0', {});
    const task = await coordinator.getTask(session.caller, id);
    if (!task.final) {
      const gone = new AbortController();
      request.raw.once('close', () => gone.abort());
      await coordinator.waitForLogs(
        id,
        after,
        AbortSignal.any([gone.signal, AbortSignal.timeout(LOG_WAIT_MS)]),
      );
    }
    const [logs, now] = await Promise.all([
      coordinator.readLogs(session.caller, id, after),
      coordinator.getTask(session.caller, id),
    ]);
    return {
      lines: logs.lines.map((l) => ({ seq: l.seq, attempt: l.attempt, html: logLines([l]).value })),
      last: logs.lines.at(-1)?.seq ?? after,
      final: now.final,
    };
  });
}
