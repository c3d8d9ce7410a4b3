/** `rouse interventions` and `rouse wake|restart|terminate <agent>`. */
import { INTERVENTION_STATES, type Intervention, type InterventionState } from '@rouse/protocol';
import { createClient } from '../connection.js';
import { type CliContext, EXIT } from '../context.js';
import { followList } from '../follow.js';
import { createStyle, type Style } from '../format/style.js';
import { renderTable } from '../format/table.js';
import { formatRelative } from '../format/time.js';
import { parseChoiceList, parseLimit } from '../parse.js';

export interface InterventionsOptions {
  agent?: string;
  task?: string;
  state?: string;
  limit?: string;
  follow?: boolean;
  json?: boolean;
  url?: string;
  token?: string;
  dataDir?: string;
}

function styleState(state: InterventionState, style: Style): string {
  if (state === 'succeeded') return style.green(state);
  if (state === 'failed') return style.red(state);
  if (state === 'pending' || state === 'held') return style.yellow(state);
  return style.dim(state);
}

/** One change, as `rouse interventions -f` prints it. */
function changeLine(i: Intervention, style: Style): string {
  const task = i.taskId === null ? '' : ` task ${i.taskId}`;
  return `${styleState(i.state, style)} ${style.bold(i.id)} ${i.action} on ${i.agentId}${task} (${i.condition}, by ${i.actor}): ${i.reason}`;
}

export async function interventions(ctx: CliContext, opts: InterventionsOptions): Promise<number> {
  const states =
    opts.state === undefined
      ? undefined
      : parseChoiceList('--state', 'a state', opts.state, INTERVENTION_STATES);
  const limit = parseLimit(opts.limit);
  const { client } = createClient(ctx, opts);
  const style = createStyle(ctx.io.color);
  const list = async (): Promise<Intervention[]> =>
    (
      await client.listInterventions({
        ...(opts.agent === undefined ? {} : { agentId: opts.agent }),
        ...(opts.task === undefined ? {} : { taskId: opts.task }),
        ...(states === undefined ? {} : { states }),
        limit,
      })
    ).interventions;

  if (!opts.follow) {
    const shown = await list();
    if (opts.json) ctx.printJson({ interventions: shown });
    else printTable(ctx, shown, opts, style);
    return EXIT.ok;
  }
  const matches = (i: Intervention): boolean =>
    (opts.agent === undefined || i.agentId === opts.agent) &&
    (opts.task === undefined || i.taskId === opts.task) &&
    (states === undefined || states.includes(i.state));
  await followList(ctx, {
    what: 'interventions',
    open: (signal) => client.openEvents({ signal }),
    list,
    changed: (event) =>
      event.type === 'intervention' && matches(event.intervention) ? event.intervention : undefined,
    key: (i) => `${i.id} ${i.state}`,
    printList: (shown) => {
      if (opts.json) for (const i of [...shown].reverse()) ctx.print(JSON.stringify(i));
      else printTable(ctx, shown, opts, style);
    },
    printChange: (i) => ctx.print(opts.json ? JSON.stringify(i) : changeLine(i, style)),
  });
  return EXIT.ok;
}

function printTable(ctx: CliContext, list: Intervention[], opts: InterventionsOptions, style: Style): void {
  if (list.length === 0) {
    ctx.print(opts.agent || opts.task || opts.state ? 'no interventions match' : 'no interventions yet');
    return;
  }
  const now = ctx.now();
  for (const line of renderTable(list, [
    { header: 'ID', value: (i) => i.id },
    { header: 'AGENT', value: (i) => i.agentId },
    { header: 'CONDITION', value: (i) => i.condition },
    { header: 'ACTION', value: (i) => i.action },
    // Rungs and attempts count from 1, as in `why` and the coordinator's log ("rung 1, attempt 2").
    { header: 'RUNG', value: (i) => (i.rung === null ? '-' : String(i.rung + 1)), right: true },
    { header: 'ATTEMPT', value: (i) => (i.rung === null ? '-' : String(i.attempt)), right: true },
    { header: 'STATE', value: (i) => styleState(i.state, style) },
    { header: 'BY', value: (i) => i.actor, maxWidth: 24 },
    { header: 'STARTED', value: (i) => formatRelative(i.startedAt, now) },
    { header: 'REASON', value: (i) => i.reason, maxWidth: 48 },
  ])) {
    ctx.print(line);
  }
}

export async function sendManual(
  ctx: CliContext,
  type: 'wake' | 'restart' | 'terminate',
  agentId: string,
  opts: { reason?: string; json?: boolean; url?: string; token?: string; dataDir?: string },
): Promise<number> {
  const { client } = createClient(ctx, opts);
  const sent = await client.sendCommand(agentId, {
    type,
    ...(opts.reason === undefined ? {} : { reason: opts.reason }),
  });
  if (opts.json) {
    ctx.printJson({ commandId: sent.commandId, intervention: sent.intervention });
    return EXIT.ok;
  }
  const style = createStyle(ctx.io.color);
  ctx.print(
    `${type} queued for ${style.bold(agentId)} (command ${sent.commandId}); intervention ${sent.intervention?.id ?? '-'} is pending until the agent acknowledges it`,
  );
  return EXIT.ok;
}
