/** `rouse agents`: registered agents, their status and what they hold. */
import type { Agent } from '@rouse/protocol';
import { createClient } from '../connection.js';
import { type CliContext, EXIT } from '../context.js';
import { createStyle } from '../format/style.js';
import { renderTable } from '../format/table.js';
import { formatRelative } from '../format/time.js';

export interface AgentsOptions {
  json?: boolean;
  url?: string;
  token?: string;
  dataDir?: string;
}

export async function agents(ctx: CliContext, opts: AgentsOptions): Promise<number> {
  const { client } = createClient(ctx, opts);
  const list = await client.listAgents();
  if (opts.json) {
    ctx.printJson({ agents: list });
    return EXIT.ok;
  }
  if (list.length === 0) {
    ctx.print('no agents registered');
    return EXIT.ok;
  }
  const now = ctx.now();
  const style = createStyle(ctx.io.color);
  const status = (a: Agent) =>
    a.status === 'lost' || a.status === 'error'
      ? style.red(a.status)
      : a.status === 'running'
        ? style.cyan(a.status)
        : a.status;
  for (const line of renderTable(list, [
    { header: 'ID', value: (a) => a.id },
    { header: 'NAME', value: (a) => a.name, maxWidth: 28 },
    { header: 'AGENT TYPE', value: (a) => a.agentType, maxWidth: 20 },
    { header: 'STATUS', value: status },
    { header: 'TASKS', value: (a) => String(a.currentTaskIds.length), right: true },
    { header: 'TASK TYPES', value: (a) => a.taskTypes.join(',') || '-', maxWidth: 30 },
    { header: 'HEARTBEAT', value: (a) => formatRelative(a.lastHeartbeatAt, now) },
    { header: 'POLLED', value: (a) => formatRelative(a.lastPollAt, now) },
  ])) {
    ctx.print(line);
  }
  return EXIT.ok;
}
