/** Small pieces the views share: status badges, the CSRF field, JSON viewers, sparklines, empty states. */
import type { Json, TaskStatus } from '@rouse/protocol';
import { ago, prettyJson } from './format.js';
import { type Html, html } from './html.js';
import type { ViewContext } from './layout.js';

/** A status as text in a badge (the colour only repeats what the text says). */
export function badge(status: string, kind = 'status'): Html {
  return html`<span class="badge ${kind}-${status}">${status.replace(/_/g, ' ')}</span>`;
}

export function taskStatusBadge(status: TaskStatus, final: boolean): Html {
  return html`${badge(status)}${final || ['completed', 'cancelled', 'created', 'claimed', 'running'].includes(status) ? '' : html` <span class="muted">(will retry)</span>`}`;
}

export function csrfField(ctx: ViewContext): Html {
  return html`<input type="hidden" name="_csrf" value="${ctx.csrf}">`;
}

/** A form posting one action, returning to this page afterwards (admin sessions only; else nothing). */
export function actionButton(
  ctx: ViewContext,
  action: string,
  label: string,
  options: { danger?: boolean; fields?: Record<string, string> } = {},
): Html | '' {
  if (ctx.role !== 'admin') return '';
  return html`<form method="post" action="${action}" class="inline-action">
${csrfField(ctx)}<input type="hidden" name="back" value="${ctx.here}">
${Object.entries(options.fields ?? {}).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
<button type="submit"${options.danger ? html` class="danger"` : ''}>${label}</button>
</form>`;
}

/** Pretty JSON with copy and download (`downloadHref` serves the same document as a file). */
export function jsonViewer(id: string, title: string, value: Json | undefined, downloadHref: string): Html {
  const text = prettyJson(value);
  return html`<section class="json" aria-labelledby="${id}-title">
<h3 id="${id}-title">${title}</h3>
<div class="tools">
<button type="button" data-copy="#${id}">Copy</button>
<a href="${downloadHref}" download>Download</a>
</div>
<pre id="${id}" tabindex="0"><code>${text}</code></pre>
</section>`;
}

/**
 * An inline SVG sparkline of `values` (drawn left to right, scaled to the largest), with a text
 * alternative; nothing when there are fewer than two values.
 */
export function sparkline(values: readonly number[], label: string, width = 160, height = 32): Html {
  if (values.length < 2) return html`<span class="muted">${label}: not enough samples yet</span>`;
  return sparkSvg(values, label, width, height);
}

/** A small sparkline for a table cell: nothing at all when there are fewer than two values. */
export function miniSparkline(values: readonly number[], label: string): Html | '' {
  return values.length < 2 ? '' : sparkSvg(values, label, 64, 18);
}

function sparkSvg(values: readonly number[], label: string, width: number, height: number): Html {
  const max = Math.max(...values, 1e-9);
  const step = width / (values.length - 1);
  const points = values
    .map((v, i) => `${(i * step).toFixed(1)},${(height - 2 - (v / max) * (height - 4)).toFixed(1)}`)
    .join(' ');
  return html`<svg class="spark" role="img" aria-label="${label}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}"><title>${label}</title><polyline fill="none" stroke="currentColor" stroke-width="1.5" points="${points}"/></svg>`;
}

export function empty(text: string): Html {
  return html`<p class="empty">${text}</p>`;
}

/** A table of label → value rows. */
export function facts(rows: [string, Html | string | number | null][]): Html {
  return html`<dl class="facts">${rows.map(([k, v]) => html`<dt>${k}</dt><dd>${v ?? '—'}</dd>`)}</dl>`;
}

/**
 * `12 s ago` / `in 3 min` that keeps counting in the browser: the page's script updates every
 * `time[data-ago]` each second from its `datetime`, against the coordinator's clock (`data-now` on the
 * body), until the next refresh writes it anew.
 */
export function agoLive(ms: number | null, now: number): Html | string {
  if (ms === null) return '—';
  return html`<time datetime="${new Date(ms).toISOString()}" data-ago>${ago(ms, now)}</time>`;
}
