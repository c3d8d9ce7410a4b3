/** The task list and the task page. */
import { type TaskFilters, tasksView, taskView } from '@rouse/dashboard';
import type { TaskStatus } from '@rouse/protocol';
import * as schemas from '@rouse/protocol/schemas';
import { toTaskQuery } from '../../routes/tasks.js';
import { LIST_SHARE } from '../read-sharing.js';
import type { Site } from '../site.js';

/**
 * The holder's heartbeat gaps for a task's sparkline: the gaps the store keeps (adaptive policies),
 * else the spacing of its metric samples since the attempt began.
 */
function heartbeatGaps(
  history: { gaps: number[]; samples: { at: number }[] } | null,
  since: number | null,
): number[] {
  if (history === null) return [];
  if (history.gaps.length > 0) return history.gaps;
  const at = history.samples.map((x) => x.at).filter((t) => since === null || t >= since);
  return at.slice(1).map((t, i) => t - (at[i] ?? t));
}

export function registerTaskPages(site: Site): void {
  const { coordinator, pageRoute, shared } = site;

  pageRoute('/tasks', async (request, session, vc) => {
    const raw = { ...(request.query as Record<string, unknown>) };
    for (const k of Object.keys(raw)) if (raw[k] === '') delete raw[k];
    const filters: TaskFilters = {};
    if (typeof raw.status === 'string') filters.status = raw.status.split(',') as TaskStatus[];
    if (typeof raw.type === 'string') filters.type = raw.type;
    if (typeof raw.agentId === 'string') filters.agentId = raw.agentId;
    if (typeof raw.label === 'string') filters.label = raw.label;
    if (typeof raw.q === 'string') filters.q = raw.q;
    if (typeof raw.cursor === 'string') filters.cursor = raw.cursor;
    const parsed = schemas.listTasksQuery.safeParse({ ...raw, limit: '50' });
    if (!parsed.success) {
      const error = parsed.error.issues.map((i) => `${i.path.join('.') || 'query'}: ${i.message}`).join('; ');
      return tasksView({ filters, tasks: [], nextCursor: null, error }, vc);
    }
    const query = toTaskQuery(parsed.data);
    const { tasks, nextCursor } = await shared(
      request,
      `tasks|${session.role}|${JSON.stringify(query)}`,
      LIST_SHARE,
      () => coordinator.listTasks(session.caller, query),
    );
    return tasksView({ filters, tasks, nextCursor }, vc);
  });

  pageRoute('/tasks/:id', async (request, session, vc) => {
    const id = (request.params as { id: string }).id;
    const caller = session.caller;
    const task = await coordinator.getTask(caller, id);
    const [events, diagnosis, logs, history] = await Promise.all([
      coordinator.listTaskEvents(caller, id),
      coordinator.diagnose(caller, id),
      coordinator.readLogs(caller, id, 0),
      task.agentId === null ? null : coordinator.agentHistory(caller, task.agentId),
    ]);
    return taskView(
      {
        task,
        events,
        diagnosis,
        logs: logs.lines,
        logsTruncated: logs.truncated === true,
        heartbeatGapsMs: heartbeatGaps(history, task.startedAt ?? task.claimedAt),
      },
      vc,
    );
  });
}
