/** `rouse show <id>`: one task in full, with its event history. */
import type { JsonObject, Task, TaskEvent, Timing } from '@rouse/protocol';
import { createClient } from '../connection.js';
import { type CliContext, EXIT } from '../context.js';
import { createStyle, type Style } from '../format/style.js';
import { renderPairs, renderTable } from '../format/table.js';
import { actorLabel, compactJson, formatAttempts, formatProgress } from '../format/task.js';
import { formatClock, formatDuration, formatRelative } from '../format/time.js';

export interface ShowOptions {
  json?: boolean;
  url?: string;
  token?: string;
  dataDir?: string;
}

export async function show(ctx: CliContext, id: string, opts: ShowOptions): Promise<number> {
  const { client } = createClient(ctx, opts);
  const [task, events] = await Promise.all([client.getTask(id), client.getTaskEvents(id)]);
  if (opts.json) {
    ctx.printJson({ task, events });
    return EXIT.ok;
  }
  const style = createStyle(ctx.io.color);
  for (const line of renderTask(task, ctx.now(), style)) ctx.print(line);
  ctx.print();
  ctx.print(style.bold('History'));
  for (const line of renderEvents(events, style)) ctx.print(`  ${line}`);
  ctx.print();
  ctx.print(style.dim(`why it is where it is: rouse why ${task.id}`));
  return EXIT.ok;
}

const when = (at: number | null, now: number) =>
  at === null ? '-' : `${formatRelative(at, now)} (${formatClock(at)})`;

export function formatTiming(t: Timing): string {
  const ms = (v: number | null) => (v === null ? 'none' : formatDuration(v));
  return [
    `heartbeat every ${ms(t.heartbeatIntervalMs)}, timeout ${ms(t.heartbeatTimeoutMs)}`,
    `claim timeout ${ms(t.claimTimeoutMs)}`,
    `execution ${ms(t.executionTimeoutMs)}, deadline ${ms(t.attemptDeadlineMs)}`,
    `stall ${ms(t.stallTimeoutMs)}`,
  ].join('; ');
}

export function renderTask(task: Task, now: number, style: Style): string[] {
  const pairs: [string, string][] = [
    ['attempt', `${formatAttempts(task)} (version ${task.version})`],
    ['agent', task.agentId ?? '-'],
    ['priority', String(task.priority)],
  ];
  if (Object.keys(task.labels).length) {
    pairs.push([
      'labels',
      Object.entries(task.labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(' '),
    ]);
  }
  if (task.requires.length) pairs.push(['requires', task.requires.join(', ')]);
  if (task.idempotencyKey) pairs.push(['idempotency', task.idempotencyKey]);
  if (task.resumable) pairs.push(['resumable', 'yes']);
  pairs.push(['progress', formatProgress(task) + (task.executionDone ? ' (execution done)' : '')]);
  pairs.push(['created', when(task.createdAt, now)]);
  if (task.runAt > task.createdAt) pairs.push(['run at', when(task.runAt, now)]);
  if (task.claimedAt !== null) pairs.push(['claimed', when(task.claimedAt, now)]);
  if (task.startedAt !== null) pairs.push(['started', when(task.startedAt, now)]);
  if (task.lastHeartbeatAt !== null) pairs.push(['heartbeat', when(task.lastHeartbeatAt, now)]);
  if (task.progressChangedAt !== null && !task.final && task.status === 'running')
    pairs.push(['progress moved', when(task.progressChangedAt, now)]);
  if (task.leaseExpiresAt !== null && !task.final)
    pairs.push(['lease until', when(task.leaseExpiresAt, now)]);
  if (task.nextAttemptAt !== null) pairs.push(['next attempt', when(task.nextAttemptAt, now)]);
  if (task.finishedAt !== null) pairs.push(['finished', when(task.finishedAt, now)]);
  pairs.push(['timing', formatTiming(task.timing)]);
  pairs.push(['payload', compactJson(task.payload, 200)]);
  if (task.checkpoint !== null) pairs.push(['checkpoint', compactJson(task.checkpoint, 200)]);
  if (task.session !== null) pairs.push(['session', compactJson(task.session, 200)]);
  if (task.error) {
    pairs.push([
      'error',
      style.red(`${task.error.message} (${task.error.code}${task.error.retryable ? '' : ', non-retryable'})`),
    ]);
  }
  if (task.result !== null) pairs.push(['result', compactJson(task.result, 200)]);
  if (task.resultRef)
    pairs.push(['result blob', `${task.resultRef.sizeBytes} bytes, ${task.resultRef.contentType}`]);
  const head = `${style.bold(task.id)}  ${task.type}  ${style.status(task.status)}${task.final ? style.dim(' (final)') : ''}`;
  return [head, ...renderPairs(pairs, '  ')];
}

export function renderEvents(
  events: TaskEvent[],
  style: Style,
  names?: ReadonlyMap<string, string>,
): string[] {
  if (events.length === 0) return ['(no events)'];
  return renderTable(events, [
    { header: 'SEQ', value: (e) => String(e.seq), right: true },
    { header: 'AT', value: (e) => formatClock(e.at) },
    { header: 'TRANSITION', value: (e) => `${e.from ?? '∅'} → ${style.status(e.to)}` },
    { header: 'ATTEMPT', value: (e) => String(e.attempt), right: true },
    { header: 'V', value: (e) => String(e.version), right: true },
    { header: 'BY', value: (e) => actorLabel(e.actor, names) },
    {
      header: 'REASON',
      value: (e) =>
        e.reason + (e.details && Object.keys(e.details).length ? `  ${formatDetails(e.details)}` : ''),
      maxWidth: 100,
    },
  ]);
}

/** Event details as `key=value` pairs: times as clock times, durations humanized. */
export function formatDetails(details: JsonObject): string {
  return Object.entries(details)
    .map(([k, v]) => {
      if (typeof v === 'number' && /At$/.test(k)) return `${k}=${formatClock(v)}`;
      if (typeof v === 'number' && /Ms$/.test(k)) return `${k}=${formatDuration(v)}`;
      return `${k}=${typeof v === 'string' ? v : compactJson(v, 60)}`;
    })
    .join(' ');
}
