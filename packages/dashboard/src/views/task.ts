/**
 * Task: where it is and why (the API's diagnosis, word for word), its timeline (every transition with
 * actor, reason and version), its attempts side by side, progress beside liveness, logs per attempt
 * (followed live while it runs), and its payload, result, checkpoint and session.
 */
import type { Diagnosis, LogLine, Task, TaskEvent } from '@rouse/protocol';
import {
  actionButton,
  agoLive,
  badge,
  empty,
  facts,
  jsonViewer,
  sparkline,
  taskStatusBadge,
} from '../components.js';
import { duration, isoTime, prettyJson } from '../format.js';
import { type Html, html } from '../html.js';
import type { View, ViewContext } from '../layout.js';

export interface TaskData {
  task: Task;
  events: TaskEvent[];
  diagnosis: Diagnosis;
  logs: LogLine[];
  logsTruncated: boolean;
  /** Gaps (ms) between the heartbeats this coordinator saw for the current attempt, oldest first. */
  heartbeatGapsMs: number[];
}

interface Attempt {
  n: number;
  agent: string | null;
  claimedAt: number | null;
  startedAt: number | null;
  endedAt: number | null;
  outcome: string;
  reason: string;
}

/** The attempts, from the history: who claimed each, when it started and ended, and how. */
export function attemptsOf(events: TaskEvent[]): Attempt[] {
  const byN = new Map<number, Attempt>();
  for (const e of events) {
    if (e.attempt === 0) continue;
    const a = byN.get(e.attempt) ?? {
      n: e.attempt,
      agent: null,
      claimedAt: null,
      startedAt: null,
      endedAt: null,
      outcome: 'claimed',
      reason: '',
    };
    if (e.to === 'claimed') {
      a.claimedAt = e.at;
      a.agent = e.actor.startsWith('agent:') ? e.actor.slice(6) : a.agent;
    }
    if (e.to === 'running') a.startedAt = e.at;
    a.outcome = e.to;
    a.reason = e.reason;
    if (['completed', 'failed', 'timeout', 'cancelled'].includes(e.to)) a.endedAt = e.at;
    byN.set(e.attempt, a);
  }
  return [...byN.values()].sort((x, y) => x.n - y.n);
}

function diagnosisBlock(d: Diagnosis, now: number): Html {
  return html`<section class="diagnosis" aria-labelledby="t-why"><h2 id="t-why">Why it is ${d.status}</h2>
<p class="summary" data-diagnosis-summary>${d.summary}</p>
${
  d.reasons.length === 0
    ? ''
    : html`<ul class="reasons">${d.reasons.map(
        (
          r,
        ) => html`<li data-reason="${r.code}"><span class="mono">${r.code}</span>: <span data-reason-message>${r.message}</span>${r.since === null ? '' : html` <span class="muted">(since ${agoLive(r.since, now)})</span>`}
${Object.keys(r.details).length === 0 ? '' : html`<details><summary>Evidence</summary><pre><code>${prettyJson(r.details)}</code></pre></details>`}</li>`,
      )}</ul>`
}
${d.suggestions.length === 0 ? '' : html`<h3>Suggestions</h3><ul class="suggestions">${d.suggestions.map((s) => html`<li>${s}</li>`)}</ul>`}
</section>`;
}

function timeline(events: TaskEvent[]): Html {
  return html`<section aria-labelledby="t-timeline"><h2 id="t-timeline">Timeline</h2>
<ol class="timeline">${events.map(
    (
      e,
    ) => html`<li data-event="${e.seq}"><time datetime="${new Date(e.at).toISOString()}">${isoTime(e.at)}</time>
${e.from === null ? '' : html`${badge(e.from)} → `}${badge(e.to)}
<span class="muted">v${e.version} · attempt ${e.attempt} · by</span> <span class="mono">${e.actor}</span>
<span class="reason">${e.reason}</span>
${e.details === null || Object.keys(e.details).length === 0 ? '' : html`<details><summary>Details</summary><pre><code>${prettyJson(e.details)}</code></pre></details>`}</li>`,
  )}</ol></section>`;
}

function attemptsTable(attempts: Attempt[], now: number): Html {
  if (attempts.length === 0)
    return html`<section aria-labelledby="t-attempts"><h2 id="t-attempts">Attempts</h2>${empty('Not claimed yet.')}</section>`;
  return html`<section aria-labelledby="t-attempts"><h2 id="t-attempts">Attempts</h2><div class="scroll"><table>
<thead><tr><th scope="col">#</th><th scope="col">Agent</th><th scope="col">Claimed</th><th scope="col">Started</th><th scope="col">Ran for</th><th scope="col">Outcome</th><th scope="col">Why</th></tr></thead>
<tbody>${attempts.map(
    (
      a,
    ) => html`<tr><th scope="row">${a.n}</th><td>${a.agent ? html`<a class="mono" href="/agents/${a.agent}">${a.agent}</a>` : '—'}</td>
<td>${isoTime(a.claimedAt)}</td><td>${isoTime(a.startedAt)}</td>
<td>${a.startedAt === null ? '—' : duration((a.endedAt ?? now) - a.startedAt)}</td>
<td>${badge(a.outcome)}</td><td>${a.reason}</td></tr>`,
  )}</tbody></table></div></section>`;
}

/** Log lines as list items (also the fragment the page's script appends while following). */
export function logLines(lines: LogLine[]): Html {
  return html`${lines.map(
    (l) =>
      html`<li data-seq="${l.seq}" data-attempt="${l.attempt}" class="log-${l.stream}"><time datetime="${new Date(l.at).toISOString()}">${isoTime(l.at).slice(11, 19)}</time> <span class="stream">${l.stream}</span> ${l.text}</li>`,
  )}`;
}

function logsBlock(task: Task, data: TaskData): Html {
  const attempts = [...new Set(data.logs.map((l) => l.attempt))].sort((a, b) => a - b);
  if (!attempts.includes(task.attempt) && task.attempt > 0) attempts.push(task.attempt);
  const last = data.logs.at(-1)?.seq ?? 0;
  return html`<section aria-labelledby="t-logs"><h2 id="t-logs">Logs</h2>
${data.logsTruncated ? html`<p class="muted">The task's log cap was reached; later lines were dropped.</p>` : ''}
${
  attempts.length === 0
    ? empty('No log lines.')
    : attempts.map(
        (
          n,
        ) => html`<details class="logs"${n === task.attempt ? html` open` : ''}><summary>Attempt ${n}</summary>
<ol class="log" data-log-attempt="${n}" aria-label="Log of attempt ${n}">${logLines(data.logs.filter((l) => l.attempt === n))}</ol></details>`,
      )
}
<div data-log-follow="/tasks/${task.id}/logs" data-after="${last}" data-final="${task.final ? '1' : '0'}" hidden></div>
</section>`;
}

export function taskView(data: TaskData, ctx: ViewContext): View {
  const { task } = data;
  const cancellable = !task.final;
  const retryable = task.final && (task.status === 'failed' || task.status === 'timeout');
  const beat = task.lastHeartbeatAt;
  const actions = html`<div class="actions">${cancellable ? actionButton(ctx, `/tasks/${task.id}/cancel`, 'Cancel task', { danger: true }) : ''}${
    retryable ? actionButton(ctx, `/tasks/${task.id}/retry`, 'Retry task') : ''
  }</div>`;
  const live = html`<div class="task-head">
<p>${taskStatusBadge(task.status, task.final)} <span class="muted">version ${task.version}</span></p>
${actions}
</div>
${facts([
  ['Type', task.type],
  ['Attempt', `${task.attempt} of ${task.maxAttempts}`],
  ['Agent', task.agentId ? html`<a class="mono" href="/agents/${task.agentId}">${task.agentId}</a>` : null],
  ['Idempotency key', task.idempotencyKey],
  [
    'Labels',
    Object.keys(task.labels).length === 0
      ? null
      : Object.entries(task.labels)
          .map(([k, v]) => `${k}:${v}`)
          .join(', '),
  ],
  ['Requires', task.requires.length === 0 ? null : task.requires.join(', ')],
  [
    'Created',
    html`${isoTime(task.createdAt)} <span class="muted">(${agoLive(task.createdAt, ctx.now)})</span>`,
  ],
  ['Finished', task.finishedAt === null ? null : isoTime(task.finishedAt)],
  [
    'Next attempt',
    task.nextAttemptAt === null
      ? null
      : task.nextAttemptAt <= ctx.now
        ? html`${isoTime(task.nextAttemptAt)} <span class="muted">(claimable since ${agoLive(task.nextAttemptAt, ctx.now)})</span>`
        : html`${isoTime(task.nextAttemptAt)} <span class="muted">(${agoLive(task.nextAttemptAt, ctx.now)})</span>`,
  ],
  [
    'Error',
    task.error === null ? null : html`<span class="mono">${task.error.code}</span>: ${task.error.message}`,
  ],
])}
<section class="liveness" aria-labelledby="t-progress"><h2 id="t-progress">Progress and liveness</h2>
<div class="pair">
<div><h3>Progress</h3>${
    task.progress === null
      ? html`<p class="muted">No progress reported.</p>`
      : html`<p><progress max="1" value="${task.progress}" aria-label="Progress">${Math.round(task.progress * 100)} %</progress> ${Math.round(task.progress * 100)} % ${task.phase ?? ''}</p>`
  }<p class="muted">Last changed ${agoLive(task.progressChangedAt, ctx.now)}</p></div>
<div><h3>Heartbeats</h3><p>Last ${agoLive(beat, ctx.now)}${task.leaseExpiresAt === null ? '' : html`; lease ends ${agoLive(task.leaseExpiresAt, ctx.now)}`}</p>
${sparkline(data.heartbeatGapsMs, 'Gaps between heartbeats')}</div>
</div></section>
${diagnosisBlock(data.diagnosis, ctx.now)}
${attemptsTable(attemptsOf(data.events), ctx.now)}
${timeline(data.events)}
${logsBlock(task, data)}
<section aria-labelledby="t-data"><h2 id="t-data">Data</h2>
${jsonViewer('payload', 'Payload', task.payload, `/tasks/${task.id}/json/payload`)}
${
  task.resultRef !== null
    ? html`<section class="json"><h3>Result</h3><p>Stored as a blob (${task.resultRef.sizeBytes} bytes, ${task.resultRef.contentType}): <a href="/tasks/${task.id}/result" download>download</a>.</p></section>`
    : task.result !== null
      ? jsonViewer('result', 'Result', task.result, `/tasks/${task.id}/json/result`)
      : ''
}
${task.checkpoint === null ? '' : jsonViewer('checkpoint', 'Checkpoint', task.checkpoint, `/tasks/${task.id}/json/checkpoint`)}
${task.session === null ? '' : jsonViewer('session', 'Session', task.session, `/tasks/${task.id}/json/session`)}
</section>`;
  // Held: its heartbeat and lease move with every beat, which sends no event.
  const held = task.status === 'claimed' || task.status === 'running';
  return {
    title: `Task ${task.id}`,
    nav: 'tasks',
    topics: [`task:${task.id}`],
    live,
    ...(held ? { refreshEveryMs: Math.min(30_000, Math.max(1000, task.timing.heartbeatIntervalMs)) } : {}),
  };
}
