/** Overview: tasks by status and type, the last hour's throughput, failures and latency, agents, conditions, alerts, dependencies. */
import { type Alert, TASK_STATUSES, type TaskStatus } from '@rouse/protocol';
import { badge, empty } from '../components.js';
import { duration, percent, percentile } from '../format.js';
import { html } from '../html.js';
import type { View, ViewContext } from '../layout.js';

/** A dependency as `GET /v1/dependencies` lists it. */
export interface DependencyView {
  name: string;
  state: string;
  until: number | null;
  reportedBy: string | null;
  since: number;
  message: string | null;
}

export interface OverviewData {
  tasks: {
    byTypeAndStatus: { type: string; status: TaskStatus; count: number }[];
    completedSince: number;
    failedSince: number;
    latenciesMs: number[];
  };
  /** The window the throughput, failures and latencies cover. */
  windowMs: number;
  agentsByStatus: Record<string, number>;
  openConditions: Record<string, number>;
  firingAlerts: Alert[];
  dependencies: DependencyView[];
}

/** `n` in `windowMs` as a rate a person reads: per minute, or per hour when under one a minute. */
function rate(n: number, windowMs: number): string {
  const perMin = n / Math.max(1, windowMs / 60_000);
  if (perMin >= 1) return `${perMin.toFixed(perMin < 10 ? 1 : 0)}/min`;
  return `${(perMin * 60).toFixed(perMin * 60 < 10 && perMin > 0 ? 1 : 0)}/h`;
}

export function overviewView(data: OverviewData, ctx: ViewContext): View {
  const byStatus = new Map<TaskStatus, number>();
  const types = new Map<string, Map<TaskStatus, number>>();
  for (const row of data.tasks.byTypeAndStatus) {
    byStatus.set(row.status, (byStatus.get(row.status) ?? 0) + row.count);
    const t = types.get(row.type) ?? new Map<TaskStatus, number>();
    t.set(row.status, row.count);
    types.set(row.type, t);
  }
  const total = [...byStatus.values()].reduce((a, b) => a + b, 0);
  const { completedSince, failedSince, latenciesMs } = data.tasks;
  const finished = completedSince + failedSince;
  const window = duration(data.windowMs);
  const lat = (p: number) => {
    const v = percentile(latenciesMs, p);
    return v === null ? '—' : duration(v);
  };
  const notOk = data.dependencies.filter((d) => d.state !== 'ok');
  const agentTotal = Object.values(data.agentsByStatus).reduce((a, b) => a + b, 0);
  const conditions = Object.entries(data.openConditions).filter(([, n]) => n > 0);
  void ctx;

  const live = html`<div class="cards">
<section class="card" aria-labelledby="ov-tasks"><h2 id="ov-tasks">Tasks</h2>
<p class="big">${total}</p>
<ul class="counts">${TASK_STATUSES.map(
    (s) =>
      html`<li><a href="/tasks?status=${s}">${badge(s)} <span class="n">${byStatus.get(s) ?? 0}</span></a></li>`,
  )}</ul></section>
<section class="card" aria-labelledby="ov-throughput"><h2 id="ov-throughput">Last ${window}</h2>
<dl class="facts">
<dt>Completed</dt><dd>${completedSince} <span class="muted">(${rate(completedSince, data.windowMs)})</span></dd>
<dt>Failed for good</dt><dd>${failedSince}</dd>
<dt>Failure rate</dt><dd>${finished === 0 ? '—' : percent(failedSince / finished)}</dd>
<dt>Created → completed</dt><dd><span class="nowrap">p50 ${lat(0.5)}</span> · <span class="nowrap">p90 ${lat(0.9)}</span> · <span class="nowrap">p99 ${lat(0.99)}</span></dd>
</dl></section>
<section class="card" aria-labelledby="ov-agents"><h2 id="ov-agents">Agents</h2>
<p class="big">${agentTotal}</p>
<ul class="counts">${Object.entries(data.agentsByStatus).map(
    ([s, n]) =>
      html`<li><a href="/agents?status=${s}">${badge(s, 'agent')} <span class="n">${n}</span></a></li>`,
  )}</ul></section>
<section class="card" aria-labelledby="ov-conditions"><h2 id="ov-conditions">Open conditions</h2>
${
  conditions.length === 0
    ? empty('None.')
    : html`<ul class="counts">${conditions.map(([k, n]) => html`<li>${badge(k, 'condition')} <span class="n">${n}</span></li>`)}</ul>`
}</section>
</div>
<section aria-labelledby="ov-alerts"><h2 id="ov-alerts">Firing alerts</h2>
${
  data.firingAlerts.length === 0
    ? empty('No alert is firing.')
    : html`<ul class="list">${data.firingAlerts.map(
        (a) =>
          html`<li><a href="/alerts/${a.id}">${badge(a.severity, 'severity')} ${a.summary}</a> <span class="muted">${a.agentIds.length} agent(s)</span></li>`,
      )}</ul>`
}</section>
<section aria-labelledby="ov-deps"><h2 id="ov-deps">Dependencies down or rate-limited</h2>
${
  notOk.length === 0
    ? empty('Every known dependency is ok.')
    : html`<ul class="list">${notOk.map(
        (d) =>
          html`<li><a href="/dependencies">${d.name}</a> ${badge(d.state, 'dep')} ${d.message ?? ''}</li>`,
      )}</ul>`
}</section>
<section aria-labelledby="ov-types"><h2 id="ov-types">Tasks by type</h2>
${
  types.size === 0
    ? empty('No tasks yet.')
    : html`<div class="scroll"><table>
<thead><tr><th scope="col">Type</th>${TASK_STATUSES.map((s) => html`<th scope="col" class="num">${s}</th>`)}</tr></thead>
<tbody>${[...types.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(
          ([type, counts]) =>
            html`<tr><th scope="row"><a href="/tasks?type=${encodeURIComponent(type)}">${type}</a></th>${TASK_STATUSES.map(
              (s) => html`<td class="num">${counts.get(s) ?? 0}</td>`,
            )}</tr>`,
        )}</tbody></table></div>`
}</section>`;
  return { title: 'Overview', nav: 'overview', topics: ['tasks', 'agents', 'alerts'], live };
}
