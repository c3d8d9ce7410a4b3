/** The dashboard's actions (admin sessions; Origin and CSRF checked): cancel, retry, bulk, agent commands. */
import { bulkConfirmView, bulkResultView, page } from '@rouse/dashboard';
import { RouseError } from '../../../core/errors.js';
import { type Form, many, one, safeBack } from '../form.js';
import type { Site } from '../site.js';

const MAX_BULK = 1000;

export function registerActions(site: Site): void {
  const { scope, coordinator, urls, viewContext, writeSession, sendHtml } = site;

  scope.post('/tasks/:id/cancel', async (request, reply) => {
    const session = await writeSession(request);
    const id = (request.params as { id: string }).id;
    await coordinator.cancelTask(session.caller, id, 'cancelled from the dashboard');
    return reply.code(303).redirect(safeBack(one(request.body as Form, 'back'), `/tasks/${id}`));
  });

  scope.post('/tasks/:id/retry', async (request, reply) => {
    const session = await writeSession(request);
    const id = (request.params as { id: string }).id;
    await coordinator.retryTask(session.caller, id);
    return reply.code(303).redirect(safeBack(one(request.body as Form, 'back'), `/tasks/${id}`));
  });

  scope.post('/tasks/bulk', async (request, reply) => {
    const session = await writeSession(request);
    const form = request.body as Form;
    const action = one(form, 'action');
    if (action !== 'cancel' && action !== 'retry')
      throw new RouseError('validation_failed', 'action: cancel or retry', {});
    const ids = [...new Set(many(form, 'id'))];
    if (ids.length === 0) throw new RouseError('validation_failed', 'id: select at least one task', {});
    if (ids.length > MAX_BULK)
      throw new RouseError('validation_failed', `id: at most ${MAX_BULK} tasks at once`, {});
    const back = safeBack(one(form, 'back'), '/tasks');
    const vc = viewContext(request, session);
    if (one(form, 'confirmed') !== String(ids.length)) {
      return sendHtml(reply, page(bulkConfirmView(action, ids, back, vc), vc, urls));
    }
    let done = 0;
    const refused: { id: string; message: string }[] = [];
    for (const id of ids) {
      try {
        if (action === 'cancel')
          await coordinator.cancelTask(session.caller, id, 'cancelled from the dashboard (bulk)');
        else await coordinator.retryTask(session.caller, id);
        done++;
      } catch (err) {
        if (!(err instanceof RouseError)) throw err;
        refused.push({ id, message: err.message });
      }
    }
    return sendHtml(reply, page(bulkResultView(action, done, refused, back, vc), vc, urls));
  });

  scope.post('/agents/:id/commands', async (request, reply) => {
    const session = await writeSession(request);
    const id = (request.params as { id: string }).id;
    const type = one(request.body as Form, 'type');
    if (type !== 'wake' && type !== 'restart' && type !== 'terminate') {
      throw new RouseError('validation_failed', 'type: wake, restart or terminate', {});
    }
    await coordinator.sendCommand(session.caller, id, { type, reason: 'from the dashboard' });
    return reply.code(303).redirect(safeBack(one(request.body as Form, 'back'), `/agents/${id}`));
  });
}
