/** Agents and Agent: derived status, conditions with evidence, the ladder's interventions, snapshots, commands. */
import {
  AGENT_STATUSES,
  type Agent,
  type AgentConditionRecord,
  type AgentDiagnosis,
  type AgentSnapshot,
  type Intervention,
} from '@rouse/protocol';
import {
  actionButton,
  agoLive,
  badge,
  empty,
  facts,
  jsonViewer,
  miniSparkline,
  sparkline,
} from '../components.js';
import { isoTime, prettyJson } from '../format.js';
import { type Html, html } from '../html.js';
import type { View, ViewContext } from '../layout.js';

export interface AgentsData {
  agents: Agent[];
  /** Each agent's recent RSS (bytes) and CPU (%) samples, oldest first (agents without are left out). */
  samples?: ReadonlyMap<string, { rss: number[]; cpu: number[] }>;
  nextCursor: string | null;
  status?: string;
  type?: string;
}

function mb(bytes: number | undefined): string {
  return bytes === undefined ? '—' : `${(bytes / 1048576).toFixed(0)} MB`;
}

export function agentsView(data: AgentsData, ctx: ViewContext): View {
  const q = (cursor: string | null) => {
    const p = new URLSearchParams();
    if (data.status) p.set('status', data.status);
    if (data.type) p.set('type', data.type);
    if (cursor) p.set('cursor', cursor);
    const s = p.toString();
    return s === '' ? '' : `?${s}`;
  };
  const head = html`<form method="get" action="/agents" class="filters" aria-label="Filter agents">
<div class="field"><label for="a-status">Status</label><select id="a-status" name="status"><option value="">any</option>${AGENT_STATUSES.map(
    (st) =>
      html`<option value="${st}"${st === data.status ? html` selected` : ''}>${st.replace(/_/g, ' ')}</option>`,
  )}</select></div>
<div class="field"><label for="a-type">Type</label><input id="a-type" name="type" value="${data.type ?? ''}"></div>
<div class="field"><button type="submit">Apply</button> <a href="/agents">Clear</a></div></form>`;
  const live =
    data.agents.length === 0
      ? empty('No agents match.')
      : html`<div class="scroll"><table data-list><caption class="sr-only">Agents</caption>
<thead><tr><th scope="col">Agent</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col">Conditions</th><th scope="col" class="num">Incarnation</th><th scope="col">Heartbeat</th><th scope="col" class="num">Tasks</th><th scope="col">Supervisor</th><th scope="col">RSS</th><th scope="col">CPU</th></tr></thead>
<tbody>${data.agents.map(
          (
            a,
          ) => html`<tr data-row data-href="/agents/${a.id}"><td><a href="/agents/${a.id}">${a.name}</a> <span class="mono muted id">${a.id}</span></td>
<td class="nowrap">${a.agentType}</td><td>${badge(a.status, 'agent')}</td>
<td>${a.conditions.length === 0 ? '—' : a.conditions.map((c) => badge(c.condition, 'condition'))}</td>
<td class="num">${a.incarnation}</td><td>${agoLive(a.lastHeartbeatAt, ctx.now)}</td><td class="num">${a.currentTaskIds.length}</td>
<td>${a.supervisorId ? html`<a class="mono" href="/agents/${a.supervisorId}">${a.supervisorId}</a>` : '—'}</td>
<td class="metric">${miniSparkline(data.samples?.get(a.id)?.rss ?? [], `RSS of ${a.name}, recent samples`)}<span>${mb(a.metrics?.rssBytes)}</span></td>
<td class="metric">${miniSparkline(data.samples?.get(a.id)?.cpu ?? [], `CPU of ${a.name}, recent samples`)}<span>${a.metrics?.cpuPercent === undefined ? '—' : `${a.metrics.cpuPercent.toFixed(0)} %`}</span></td></tr>`,
        )}</tbody></table></div>
<nav class="pager" aria-label="Pages">${data.nextCursor ? html`<a rel="next" href="/agents${q(data.nextCursor)}">Next page</a>` : ''}</nav>`;
  // Their last heartbeats move with every beat, which sends no event.
  const beating = data.agents.some((a) => a.status !== 'left' && a.status !== 'terminated');
  return {
    title: 'Agents',
    nav: 'agents',
    topics: ['agents'],
    head,
    live,
    ...(beating ? { refreshEveryMs: 5000 } : {}),
  };
}

export interface AgentData {
  agent: Agent;
  diagnosis: AgentDiagnosis;
  conditions: AgentConditionRecord[];
  interventions: Intervention[];
  snapshot: AgentSnapshot | null;
  /** RSS (bytes) and CPU (%) samples this coordinator saw, oldest first. */
  rssSamples: number[];
  cpuSamples: number[];
}

export function interventionItem(i: Intervention, now: number): Html {
  return html`<li data-intervention="${i.id}"><time datetime="${new Date(i.startedAt).toISOString()}">${isoTime(i.startedAt)}</time>
${badge(i.action, 'action')} ${badge(i.state, 'istate')} <span class="muted">${i.rung === null ? 'manual' : `rung ${i.rung + 1}, attempt ${i.attempt}`} · on ${i.condition} · by</span> <span class="mono">${i.actor}</span>
<span class="reason">${i.reason}</span>${i.endedAt === null ? html` <span class="muted">(under way ${agoLive(i.startedAt, now)})</span>` : ''}
${Object.keys(i.evidence).length === 0 ? '' : html`<details><summary>Evidence</summary><pre><code>${prettyJson(i.evidence)}</code></pre></details>`}</li>`;
}

export function agentView(data: AgentData, ctx: ViewContext): View {
  const { agent: a, diagnosis: d } = data;
  const ended = a.endedAt !== null;
  const actions = ended
    ? ''
    : html`<div class="actions">${actionButton(ctx, `/agents/${a.id}/commands`, 'Wake', { fields: { type: 'wake' } })}${actionButton(
        ctx,
        `/agents/${a.id}/commands`,
        'Restart',
        { fields: { type: 'restart' } },
      )}${actionButton(ctx, `/agents/${a.id}/commands`, 'Terminate', { danger: true, fields: { type: 'terminate' } })}</div>`;
  const live = html`<div class="task-head"><p>${badge(a.status, 'agent')} <span class="muted">${a.agentType} · incarnation ${a.incarnation}</span></p>${actions}</div>
${facts([
  ['Id', html`<span class="mono">${a.id}</span>`],
  ['Host / pid', `${a.host ?? '—'} / ${a.pid ?? '—'}`],
  ['Policy', a.policy],
  [
    'Supervisor',
    a.supervisorId ? html`<a class="mono" href="/agents/${a.supervisorId}">${a.supervisorId}</a>` : null,
  ],
  ['Last heartbeat', agoLive(a.lastHeartbeatAt, ctx.now)],
  [
    'Tasks held',
    a.currentTaskIds.length === 0
      ? null
      : html`${a.currentTaskIds.map((id) => html`<a class="mono" href="/tasks/${id}">${id}</a> `)}`,
  ],
  ['Said', a.statusMessage],
])}
<div class="pair">${sparkline(data.rssSamples, 'RSS')}${sparkline(data.cpuSamples, 'CPU')}</div>
<section class="diagnosis" aria-labelledby="ag-why"><h2 id="ag-why">Why it is ${d.status}</h2>
<p class="summary">${d.summary}</p>
<ul class="reasons">${d.reasons.map((r) => html`<li><span class="mono">${r.code}</span>: ${r.message}</li>`)}</ul>
${d.suggestions.length === 0 ? '' : html`<ul class="suggestions">${d.suggestions.map((s) => html`<li>${s}</li>`)}</ul>`}
<p><strong>Recovery:</strong> ${badge(d.recovery.state, 'recovery')} ${d.recovery.message}</p></section>
<section aria-labelledby="ag-cond"><h2 id="ag-cond">Conditions</h2>${
    data.conditions.length === 0
      ? empty('None recorded.')
      : html`<ul class="timeline">${data.conditions.map(
          (c) =>
            html`<li>${badge(c.condition, 'condition')} since ${isoTime(c.since)} <span class="muted">by ${c.openedBy}</span> ${
              c.closedAt === null
                ? html`<strong>open</strong>`
                : html`<span class="muted">closed ${isoTime(c.closedAt)}: ${c.closeReason ?? ''}</span>`
            }<details><summary>Evidence</summary><pre><code>${prettyJson(c.evidence)}</code></pre></details></li>`,
        )}</ul>`
  }</section>
<section aria-labelledby="ag-int"><h2 id="ag-int">Interventions</h2>${
    data.interventions.length === 0
      ? empty('None.')
      : html`<ol class="timeline" data-interventions>${data.interventions.map((i) => interventionItem(i, ctx.now))}</ol>`
  }</section>
<section aria-labelledby="ag-snap"><h2 id="ag-snap">Snapshot</h2>${
    data.snapshot === null
      ? empty('No snapshot.')
      : html`<p class="muted">version ${data.snapshot.version}, ${data.snapshot.sizeBytes} bytes, updated ${agoLive(data.snapshot.updatedAt, ctx.now)}</p>${jsonViewer('snapshot', 'State', data.snapshot.state, `/agents/${a.id}/json/snapshot`)}`
  }</section>`;
  const gone = a.status === 'left' || a.status === 'terminated';
  return {
    title: `Agent ${a.name}`,
    nav: 'agents',
    topics: [`agent:${a.id}`],
    live,
    ...(gone ? {} : { refreshEveryMs: 5000 }),
  };
}
