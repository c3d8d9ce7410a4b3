/** Interventions, Alerts, Dependencies and Policies. */
import type { Alert, Intervention, PoliciesResponse } from '@rouse/protocol';
import { agoLive, badge, empty } from '../components.js';
import { duration, isoTime, prettyJson } from '../format.js';
import { type Html, html } from '../html.js';
import type { View, ViewContext } from '../layout.js';
import { interventionItem } from './agents.js';
import type { DependencyView } from './overview.js';

/** Where a list page is: the cursor it was opened at (none: the first page) and its page size. */
export interface ListPage {
  cursor?: string;
  /** Given only when the URL asked for another size than the default. */
  limit?: number;
  nextCursor: string | null;
}

/** "First page" and "Next page" links for `path`, keeping `params` (filters) and the page size. */
export function pager(path: string, params: Record<string, string | undefined>, p: ListPage): Html {
  const q = (cursor: string | null) => {
    const s = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') s.set(k, v);
    if (p.limit !== undefined) s.set('limit', String(p.limit));
    if (cursor) s.set('cursor', cursor);
    const text = s.toString();
    return text === '' ? path : `${path}?${text}`;
  };
  return html`<nav class="pager" aria-label="Pages">${p.cursor ? html`<a href="${q(null)}">First page</a>` : ''}${
    p.nextCursor ? html`<a href="${q(p.nextCursor)}" rel="next">Next page</a>` : ''
  }</nav>`;
}

function shown(n: number, p: ListPage, what: string): Html {
  return html`<p class="muted count">${n} ${what} shown${p.cursor ? ' (a later page)' : ''}${p.nextCursor ? ', more on the next page' : ''}</p>`;
}

export function interventionsView(
  data: { interventions: Intervention[] } & ListPage,
  ctx: ViewContext,
): View {
  const items = data.interventions.map(
    (i) =>
      html`<li><a class="mono" href="/agents/${i.agentId}">${i.agentId}</a><ol class="timeline">${interventionItem(i, ctx.now)}</ol></li>`,
  );
  return {
    title: 'Interventions',
    nav: 'interventions',
    topics: ['interventions'],
    live:
      data.interventions.length === 0 && !data.cursor
        ? empty('No interventions yet.')
        : html`${shown(data.interventions.length, data, 'interventions')}<ul class="list">${items}</ul>${pager('/interventions', {}, data)}`,
  };
}

function alertItem(a: Alert, now: number) {
  const byChannel = new Map<string, Alert['notifications']>();
  for (const n of a.notifications) byChannel.set(n.channel, [...(byChannel.get(n.channel) ?? []), n]);
  return html`<li id="alert-${a.id}">${badge(a.severity, 'severity')} ${badge(a.state, 'alert')} <strong>${a.summary}</strong>
<span class="muted">${a.group.agentType} · ${a.group.condition} · first ${agoLive(a.firstAt, now)}, last ${agoLive(a.lastAt, now)}</span>
<p>Agents: ${a.agentIds.map((id) => html`<a class="mono" href="/agents/${id}">${id}</a> `)}</p>
${
  byChannel.size === 0
    ? html`<p class="muted">Not notified (no channel).</p>`
    : html`<table><caption class="sr-only">Deliveries of alert ${a.id}</caption><thead><tr><th scope="col">Channel</th><th scope="col">Deliveries</th></tr></thead><tbody>${[
        ...byChannel,
      ].map(
        ([ch, ns]) =>
          html`<tr><th scope="row">${ch}</th><td>${ns.map(
            (n) =>
              html`<span class="delivery">${n.kind} ${isoTime(n.at)} ${n.ok ? 'delivered' : html`failed: ${n.error ?? ''}`}</span> `,
          )}</td></tr>`,
      )}</tbody></table>`
}</li>`;
}

export function alertsView(data: { alerts: Alert[]; state?: string } & ListPage, ctx: ViewContext): View {
  return {
    title: 'Alerts',
    nav: 'alerts',
    topics: ['alerts'],
    head: html`<nav class="pager" aria-label="Alert states"><a href="/alerts"${data.state === undefined ? html` aria-current="page"` : ''}>All</a> <a href="/alerts?state=firing"${data.state === 'firing' ? html` aria-current="page"` : ''}>Firing</a> <a href="/alerts?state=resolved"${data.state === 'resolved' ? html` aria-current="page"` : ''}>Resolved</a></nav>`,
    live:
      data.alerts.length === 0 && !data.cursor
        ? empty('No alerts.')
        : html`${shown(data.alerts.length, data, 'alerts')}<ul class="list alerts">${data.alerts.map((a) => alertItem(a, ctx.now))}</ul>${pager('/alerts', { state: data.state }, data)}`,
  };
}

export function dependenciesView(data: { dependencies: DependencyView[] }, ctx: ViewContext): View {
  return {
    title: 'Dependencies',
    nav: 'dependencies',
    topics: ['dependencies'],
    live:
      data.dependencies.length === 0
        ? empty('No dependency has been reported.')
        : html`<div class="scroll"><table><caption class="sr-only">Dependencies</caption><thead><tr><th scope="col">Name</th><th scope="col">State</th><th scope="col">Since</th><th scope="col">Back</th><th scope="col">Reported by</th><th scope="col">Message</th></tr></thead>
<tbody>${data.dependencies.map(
            (d) =>
              html`<tr><th scope="row">${d.name}</th><td>${badge(d.state, 'dep')}</td><td>${agoLive(d.since, ctx.now)}</td><td>${d.until === null ? '—' : agoLive(d.until, ctx.now)}</td><td class="mono">${d.reportedBy ?? '—'}</td><td>${d.message ?? ''}</td></tr>`,
          )}</tbody></table></div>`,
  };
}

export function policiesView(data: PoliciesResponse, ctx: ViewContext): View {
  void ctx;
  return {
    title: 'Policies',
    nav: 'policies',
    topics: [],
    live: html`<p>From ${data.source === null ? 'the built-in defaults' : html`<code>${data.source}</code>`}, loaded ${isoTime(data.loadedAt)}.</p>
${
  data.lastError === null
    ? html`<p class="muted">The last reload succeeded.</p>`
    : html`<section class="error" role="alert"><h2>The last reload was refused (${isoTime(data.lastError.at)})</h2><ul>${data.lastError.errors.map(
        (e) => html`<li>${JSON.stringify(e)}</li>`,
      )}</ul><p>The policies below stayed in force.</p></section>`
}
${data.policies.map(
  (p) => html`<section class="policy"><h2>${p.name} <span class="muted">(${p.agentType})</span></h2>
<p>Heartbeat every ${duration(p.heartbeat.expectedIntervalMs)}, ×${p.heartbeat.timeoutFactor}${p.heartbeat.adaptive ? ', adaptive' : ''}; stall after ${duration(p.stallDetection.stallThresholdMs)}${p.stallDetection.enabled ? '' : ' (off)'}.</p>
<details><summary>Everything</summary><pre><code>${prettyJson(p as never)}</code></pre></details></section>`,
)}
<section><h2>Task types</h2>${
      Object.keys(data.taskTypes).length === 0
        ? empty('No task type has its own timing.')
        : html`<pre><code>${prettyJson(data.taskTypes)}</code></pre>`
    }</section>`,
  };
}
