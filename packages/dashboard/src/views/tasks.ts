/** Tasks: filters, search, cursor pages, and bulk retry / cancel (admin sessions). */
import { TASK_STATUSES, type Task, type TaskStatus } from '@rouse/protocol';
import { agoLive, csrfField, empty, taskStatusBadge } from '../components.js';
import { html } from '../html.js';
import type { View, ViewContext } from '../layout.js';

export interface TaskFilters {
  status?: TaskStatus[];
  type?: string;
  agentId?: string;
  label?: string;
  q?: string;
  cursor?: string;
}

export interface TasksData {
  filters: TaskFilters;
  tasks: Task[];
  nextCursor: string | null;
  /** A problem with the filters, said instead of the list. */
  error?: string;
}

/** The query string of `filters` (without the cursor unless given). */
export function tasksQuery(filters: TaskFilters, cursor?: string | null): string {
  const p = new URLSearchParams();
  if (filters.status && filters.status.length > 0) p.set('status', filters.status.join(','));
  if (filters.type) p.set('type', filters.type);
  if (filters.agentId) p.set('agentId', filters.agentId);
  if (filters.label) p.set('label', filters.label);
  if (filters.q) p.set('q', filters.q);
  if (cursor) p.set('cursor', cursor);
  const s = p.toString();
  return s === '' ? '' : `?${s}`;
}

function filterForm(f: TaskFilters): ReturnType<typeof html> {
  const one = f.status?.length === 1 ? f.status[0] : '';
  return html`<form method="get" action="/tasks" class="filters" role="search" aria-label="Filter tasks">
<div class="field grow"><label for="search">Search</label>
<input id="search" name="q" type="search" value="${f.q ?? ''}" placeholder="id, key, or a word of payload or labels" data-search></div>
<div class="field"><label for="f-status">Status</label>
<select id="f-status" name="status"><option value="">any</option>${TASK_STATUSES.map(
    (s) => html`<option value="${s}"${s === one ? html` selected` : ''}>${s}</option>`,
  )}${
    f.status && f.status.length > 1
      ? html`<option value="${f.status.join(',')}" selected>${f.status.join(', ')}</option>`
      : ''
  }</select></div>
<div class="field"><label for="f-type">Type</label><input id="f-type" name="type" value="${f.type ?? ''}"></div>
<div class="field"><label for="f-agent">Agent</label><input id="f-agent" name="agentId" value="${f.agentId ?? ''}"></div>
<div class="field"><label for="f-label">Label</label><input id="f-label" name="label" value="${f.label ?? ''}" placeholder="key:value"></div>
<div class="field"><button type="submit">Apply</button> <a href="/tasks">Clear</a></div>
</form>`;
}

export function tasksView(data: TasksData, ctx: ViewContext): View {
  const admin = ctx.role === 'admin';
  const { tasks } = data;
  const rows = tasks.map(
    (t) => html`<tr data-row data-href="/tasks/${t.id}">
${admin ? html`<td><input type="checkbox" name="id" value="${t.id}" form="bulk" aria-label="Select ${t.id}"></td>` : ''}
<td><a href="/tasks/${t.id}" class="mono">${t.id}</a></td>
<td>${t.type}</td>
<td data-status="${t.status}">${taskStatusBadge(t.status, t.final)}</td>
<td class="num">${t.attempt}/${t.maxAttempts}</td>
<td>${t.agentId ? html`<a href="/agents/${t.agentId}" class="mono">${t.agentId}</a>` : '—'}</td>
<td>${t.progress === null ? '—' : html`<progress max="1" value="${t.progress}" aria-label="Progress of ${t.id}">${Math.round(t.progress * 100)} %</progress>`} ${t.phase ?? ''}</td>
<td>${agoLive(t.createdAt, ctx.now)}</td>
</tr>`,
  );
  const list =
    data.error !== undefined
      ? html`<p class="error" role="alert">${data.error}</p>`
      : tasks.length === 0
        ? empty(data.filters.q ? `No task matches “${data.filters.q}”.` : 'No tasks match these filters.')
        : html`<div class="scroll"><table class="tasks" data-list>
<caption class="sr-only">Tasks, newest first</caption>
<thead><tr>${admin ? html`<th scope="col"><input type="checkbox" data-select-all aria-label="Select every task on this page"></th>` : ''}<th scope="col">Id</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col" class="num">Attempt</th><th scope="col">Agent</th><th scope="col">Progress</th><th scope="col">Created</th></tr></thead>
<tbody>${rows}</tbody></table></div>`;
  const pager = html`<nav class="pager" aria-label="Pages">${
    data.filters.cursor ? html`<a href="/tasks${tasksQuery(data.filters)}">First page</a>` : ''
  }${data.nextCursor ? html` <a href="/tasks${tasksQuery(data.filters, data.nextCursor)}" rel="next">Next page</a>` : ''}</nav>`;
  const bulk = admin
    ? html`<form id="bulk" method="post" action="/tasks/bulk" class="bulk" data-bulk>
${csrfField(ctx)}<input type="hidden" name="back" value="${ctx.here}">
<span data-selected-count aria-live="polite">0 selected</span>
<button type="submit" name="action" value="retry">Retry selected</button>
<button type="submit" name="action" value="cancel" class="danger">Cancel selected</button>
</form>`
    : '';
  return {
    title: 'Tasks',
    nav: 'tasks',
    topics: ['tasks'],
    head: html`${filterForm(data.filters)}${bulk}`,
    live: html`<p class="muted count">${tasks.length} shown${data.nextCursor ? ', more on the next page' : ''}</p>${list}${pager}`,
  };
}

/** The confirmation a bulk action asks for when the page's script did not (no JavaScript). */
export function bulkConfirmView(
  action: 'retry' | 'cancel',
  ids: string[],
  back: string,
  ctx: ViewContext,
): View {
  return {
    title: `${action === 'cancel' ? 'Cancel' : 'Retry'} ${ids.length} task${ids.length === 1 ? '' : 's'}?`,
    nav: 'tasks',
    topics: [],
    live: html`<form method="post" action="/tasks/bulk">
${csrfField(ctx)}<input type="hidden" name="back" value="${back}"><input type="hidden" name="confirmed" value="${ids.length}">
${ids.map((id) => html`<input type="hidden" name="id" value="${id}">`)}
<p>${action === 'cancel' ? 'Cancel' : 'Retry'} these ${ids.length} task(s)?</p>
<ul class="list mono">${ids.slice(0, 50).map((id) => html`<li>${id}</li>`)}${ids.length > 50 ? html`<li>… and ${ids.length - 50} more</li>` : ''}</ul>
<button type="submit" name="action" value="${action}" class="danger">Yes, ${action} ${ids.length}</button> <a href="${back}">No, go back</a>
</form>`,
  };
}

/** What a bulk action did, shown on the page it returns to. */
export function bulkResultView(
  action: 'retry' | 'cancel',
  done: number,
  refused: { id: string; message: string }[],
  back: string,
  ctx: ViewContext,
): View {
  void ctx;
  return {
    title: `${action === 'cancel' ? 'Cancelled' : 'Retried'} ${done} task${done === 1 ? '' : 's'}`,
    nav: 'tasks',
    topics: [],
    live: html`<p role="status">${done} done, ${refused.length} refused.</p>
${refused.length > 0 ? html`<ul class="list">${refused.map((r) => html`<li><a class="mono" href="/tasks/${r.id}">${r.id}</a>: ${r.message}</li>`)}</ul>` : ''}
<p><a href="${back}">Back</a></p>`,
  };
}
