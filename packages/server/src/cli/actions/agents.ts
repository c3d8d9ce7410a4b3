/** `rouse agents`: registered agents, their derived status, open conditions and what they hold. */
import { AGENT_STATUSES } from '@rouse/protocol';
import { createClient } from '../connection.js';
import { type CliContext, EXIT } from '../context.js';
import { conditionList, styleStatus } from '../format/agent.js';
import { createStyle } from '../format/style.js';
import { renderTable } from '../format/table.js';
import { formatRelative } from '../format/time.js';
import { parseChoiceList } from '../parse.js';

export interface AgentsOptions {
  json?: boolean;
  status?: string;
  type?: string;
  taskType?: string;
  url?: string;
  token?: string;
  dataDir?: string;
}

export async function agents(ctx: CliContext, opts: AgentsOptions): Promise<number> {
  const statuses =
    opts.status === undefined
      ? undefined
      : parseChoiceList('--status', 'a status', opts.status, AGENT_STATUSES);
  const { client } = createClient(ctx, opts);
  const list = await client.listAgents({
    ...(statuses === undefined ? {} : { status: statuses }),
    ...(opts.type === undefined ? {} : { agentType: opts.type }),
    ...(opts.taskType === undefined ? {} : { taskType: opts.taskType }),
  });
  if (opts.json) {
    ctx.printJson({ agents: list });
    return EXIT.ok;
  }
  if (list.length === 0) {
    ctx.print(opts.status || opts.type || opts.taskType ? 'no agents match' : 'no agents registered');
    return EXIT.ok;
  }
  const now = ctx.now();
  const style = createStyle(ctx.io.color);
  for (const line of renderTable(list, [
    { header: 'ID', value: (a) => a.id },
    { header: 'NAME', value: (a) => a.name, maxWidth: 28 },
    { header: 'AGENT TYPE', value: (a) => a.agentType, maxWidth: 20 },
    { header: 'STATUS', value: (a) => styleStatus(a.status, style) },
    { header: 'INC', value: (a) => String(a.incarnation), right: true },
    { header: 'CONDITIONS', value: (a) => conditionList(a.conditions), maxWidth: 44 },
    { header: 'TASKS', value: (a) => String(a.currentTaskIds.length), right: true },
    { header: 'HEARTBEAT', value: (a) => formatRelative(a.lastHeartbeatAt, now) },
    { header: 'POLLED', value: (a) => formatRelative(a.lastPollAt, now) },
  ])) {
    ctx.print(line);
  }
  return EXIT.ok;
}
