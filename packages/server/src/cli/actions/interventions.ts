/** `rouse interventions` and `rouse wake|restart|terminate <agent>`. */
import { INTERVENTION_STATES, type Intervention, type InterventionState } from '@rouse/protocol';
import { createClient } from '../connection.js';
import { type CliContext, CliError, EXIT } from '../context.js';
import { createStyle, type Style } from '../format/style.js';
import { renderTable } from '../format/table.js';
import { formatRelative } from '../format/time.js';

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

function statesOf(value: string): InterventionState[] {
  const known = INTERVENTION_STATES as readonly string[];
  return value.split(',').map((s) => {
    const state = s.trim();
    if (!known.includes(state)) {
      throw new CliError(
        `--state: "${state}" is not a state; use ${INTERVENTION_STATES.join(', ')}`,
        EXIT.usage,
      );
    }
    return state as InterventionState;
  });
}

function limitOf(value: string | undefined): number {
  const n = Number(value ?? 50);
  if (!Number.isInteger(n) || n < 1 || n > 1000) {
    throw new CliError(`--limit: "${value}" must be a whole number from 1 to 1000`, EXIT.usage);
  }
  return n;
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
  const states = opts.state === undefined ? undefined : statesOf(opts.state);
  const limit = limitOf(opts.limit);
  const { client } = createClient(ctx, opts);
  const matches = (i: Intervention): boolean =>
    (opts.agent === undefined || i.agentId === opts.agent) &&
    (opts.task === undefined || i.taskId === opts.task) &&
    (states === undefined || states.includes(i.state));
  const style = createStyle(ctx.io.color);

  const stop = new AbortController();
  // Subscribe before reading the list, so no change falls between the two.
  const stream = opts.follow ? client.events({ signal: stop.signal })[Symbol.asyncIterator]() : undefined;
  const page = await client.listInterventions({
    ...(opts.agent === undefined ? {} : { agentId: opts.agent }),
    ...(opts.task === undefined ? {} : { taskId: opts.task }),
    ...(states === undefined ? {} : { states }),
    limit,
  });
  const list = page.interventions;
  if (opts.json && !opts.follow) {
    ctx.printJson({ interventions: list });
    return EXIT.ok;
  }
  if (opts.json) {
    for (const i of [...list].reverse()) ctx.print(JSON.stringify(i));
  } else if (list.length === 0) {
    ctx.print(opts.agent || opts.task || opts.state ? 'no interventions match' : 'no interventions yet');
  } else {
    const now = ctx.now();
    for (const line of renderTable(list, [
      { header: 'ID', value: (i) => i.id },
      { header: 'AGENT', value: (i) => i.agentId },
      { header: 'CONDITION', value: (i) => i.condition },
      { header: 'ACTION', value: (i) => i.action },
      { header: 'RUNG', value: (i) => (i.rung === null ? '-' : `${i.rung}/${i.attempt}`), right: true },
      { header: 'STATE', value: (i) => styleState(i.state, style) },
      { header: 'BY', value: (i) => i.actor, maxWidth: 24 },
      { header: 'STARTED', value: (i) => formatRelative(i.startedAt, now) },
      { header: 'REASON', value: (i) => i.reason, maxWidth: 48 },
    ])) {
      ctx.print(line);
    }
  }
  if (stream === undefined) return EXIT.ok;

  const interrupt = ctx.untilInterrupted(stop.signal);
  void interrupt.done.then(() => stop.abort());
  // A change the list already shows (it happened between subscribing and reading) is not repeated.
  const shown = new Set(list.map((i) => `${i.id} ${i.state}`));
  ctx.warn('(following interventions; Ctrl-C to stop)');
  try {
    for (;;) {
      const next = await stream.next();
      if (next.done) break;
      const event = next.value;
      if (event.type !== 'intervention' || !matches(event.intervention)) continue;
      if (shown.delete(`${event.intervention.id} ${event.intervention.state}`)) continue;
      ctx.print(opts.json ? JSON.stringify(event.intervention) : changeLine(event.intervention, style));
    }
  } catch (err) {
    if (!stop.signal.aborted) throw err;
  } finally {
    stop.abort();
    interrupt.dispose();
  }
  return EXIT.ok;
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
