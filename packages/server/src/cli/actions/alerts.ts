/** `rouse alerts`: the alerts, grouped by agent type and condition, and how their notifications went. */
import { ALERT_STATES, type Alert, type AlertSeverity } from '@rouse/protocol';
import { createClient } from '../connection.js';
import { type CliContext, EXIT } from '../context.js';
import { followList } from '../follow.js';
import { createStyle, type Style } from '../format/style.js';
import { renderTable } from '../format/table.js';
import { formatRelative } from '../format/time.js';
import { parseChoiceList, parseLimit } from '../parse.js';

export interface AlertsOptions {
  state?: string;
  limit?: string;
  follow?: boolean;
  json?: boolean;
  url?: string;
  token?: string;
  dataDir?: string;
}

function styleSeverity(severity: AlertSeverity, style: Style): string {
  if (severity === 'critical' || severity === 'high') return style.red(severity);
  if (severity === 'medium') return style.yellow(severity);
  return style.dim(severity);
}

function styleState(a: Alert, style: Style): string {
  return a.state === 'firing' ? style.red(a.state) : style.green(a.state);
}

/** How its notifications went: `3 ok`, `2 ok, 1 failed (HTTP 503)`, or `-`. */
function deliveries(a: Alert): string {
  if (a.notifications.length === 0) return '-';
  const ok = a.notifications.filter((n) => n.ok).length;
  const failed = a.notifications.filter((n) => !n.ok);
  const last = failed.at(-1);
  return failed.length === 0
    ? `${ok} ok`
    : `${ok} ok, ${failed.length} failed (${last?.channel}: ${last?.error})`;
}

/** One change, as `rouse alerts -f` prints it. */
function changeLine(a: Alert, style: Style): string {
  const n = a.agentIds.length;
  return `${styleState(a, style)} ${styleSeverity(a.severity, style)} ${style.bold(a.id)} ${a.group.condition} on ${a.group.agentType} (${n} agent${n === 1 ? '' : 's'}; notifications ${deliveries(a)}): ${a.summary}`;
}

export async function alerts(ctx: CliContext, opts: AlertsOptions): Promise<number> {
  const states =
    opts.state === undefined ? undefined : parseChoiceList('--state', 'a state', opts.state, ALERT_STATES);
  const limit = parseLimit(opts.limit);
  const { client } = createClient(ctx, opts);
  const style = createStyle(ctx.io.color);
  const list = async (): Promise<Alert[]> =>
    (await client.listAlerts({ ...(states === undefined ? {} : { states }), limit })).alerts;

  if (!opts.follow) {
    const shown = await list();
    if (opts.json) ctx.printJson({ alerts: shown });
    else printTable(ctx, shown, opts, style);
    return EXIT.ok;
  }
  await followList(ctx, {
    what: 'alerts',
    open: (signal) => client.openEvents({ signal }),
    list,
    changed: (event) =>
      event.type === 'alert' && (states === undefined || states.includes(event.alert.state))
        ? event.alert
        : undefined,
    key: (a) => `${a.id} ${a.lastAt} ${a.notifications.length}`,
    printList: (shown) => {
      if (opts.json) for (const a of [...shown].reverse()) ctx.print(JSON.stringify(a));
      else printTable(ctx, shown, opts, style);
    },
    printChange: (a) => ctx.print(opts.json ? JSON.stringify(a) : changeLine(a, style)),
  });
  return EXIT.ok;
}

function printTable(ctx: CliContext, list: Alert[], opts: AlertsOptions, style: Style): void {
  if (list.length === 0) {
    ctx.print(opts.state ? 'no alerts match' : 'no alerts yet');
    return;
  }
  const now = ctx.now();
  for (const line of renderTable(list, [
    { header: 'ID', value: (a) => a.id },
    { header: 'STATE', value: (a) => styleState(a, style) },
    { header: 'SEVERITY', value: (a) => styleSeverity(a.severity, style) },
    { header: 'AGENT TYPE', value: (a) => a.group.agentType, maxWidth: 24 },
    { header: 'CONDITION', value: (a) => a.group.condition },
    { header: 'AGENTS', value: (a) => String(a.agentIds.length), right: true },
    { header: 'SINCE', value: (a) => formatRelative(a.firstAt, now) },
    { header: 'NOTIFIED', value: (a) => (a.notifiedAt === null ? '-' : formatRelative(a.notifiedAt, now)) },
    { header: 'DELIVERIES', value: (a) => deliveries(a), maxWidth: 40 },
    { header: 'SUMMARY', value: (a) => a.summary, maxWidth: 48 },
  ])) {
    ctx.print(line);
  }
}
