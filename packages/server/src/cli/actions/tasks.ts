/** `rouse tasks`: list tasks, newest first, filtered. */
import { TASK_STATUSES, type Task } from '@rouse/protocol';
import { createClient } from '../connection.js';
import { type CliContext, EXIT } from '../context.js';
import { createProgressLine } from '../format/progress.js';
import { createStyle } from '../format/style.js';
import { renderTable } from '../format/table.js';
import { agentLabel, formatAttempts, formatProgress, taskNote } from '../format/task.js';
import { formatRelative } from '../format/time.js';
import { parseChoiceList } from '../parse.js';

export interface TasksOptions {
  status?: string;
  type?: string;
  agent?: string;
  label?: Record<string, string>;
  limit: number;
  cursor?: string;
  all?: boolean;
  json?: boolean;
  url?: string;
  token?: string;
  dataDir?: string;
}

export async function listTasks(ctx: CliContext, opts: TasksOptions): Promise<number> {
  const statuses =
    opts.status === undefined
      ? undefined
      : parseChoiceList('--status', 'a status', opts.status, TASK_STATUSES);
  const { client } = createClient(ctx, opts);
  const label = opts.label ? Object.entries(opts.label).map(([k, v]) => `${k}:${v}`) : undefined;
  const tasks: Task[] = [];
  let cursor: string | null = opts.cursor ?? null;
  const progress = createProgressLine((s) => ctx.io.err(s), Boolean(opts.all && ctx.io.errTTY));
  for (;;) {
    const page = await client.listTasks({
      ...(statuses ? { status: statuses } : {}),
      ...(opts.type ? { type: opts.type } : {}),
      ...(opts.agent ? { agentId: opts.agent } : {}),
      ...(label ? { label } : {}),
      limit: opts.limit,
      ...(cursor ? { cursor } : {}),
    });
    tasks.push(...page.tasks);
    cursor = page.nextCursor ?? null;
    if (!opts.all || !cursor) break;
    progress.update(`fetching tasks… ${tasks.length}`);
  }
  progress.done();
  if (opts.json) {
    ctx.printJson({ tasks, nextCursor: cursor });
    return EXIT.ok;
  }
  if (tasks.length === 0) {
    ctx.print('no tasks match');
    return EXIT.ok;
  }
  const now = ctx.now();
  const style = createStyle(ctx.io.color);
  const lines = renderTable(tasks, [
    { header: 'ID', value: (t) => t.id },
    { header: 'TYPE', value: (t) => t.type, maxWidth: 20 },
    { header: 'STATUS', value: (t) => style.status(t.status) },
    { header: 'ATTEMPT', value: (t) => formatAttempts(t), right: true },
    { header: 'AGENT', value: (t) => agentLabel(t.agentId) },
    { header: 'PROGRESS', value: (t) => formatProgress(t), maxWidth: 24 },
    { header: 'CREATED', value: (t) => formatRelative(t.createdAt, now) },
    { header: 'NOTE', value: (t) => taskNote(t, now), maxWidth: 48 },
  ]);
  for (const line of lines) ctx.print(line);
  if (cursor) ctx.print(style.dim(`more: rouse tasks --cursor ${cursor} (or --all)`));
  return EXIT.ok;
}
