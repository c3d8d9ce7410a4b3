/** `rouse agent show <id>`: one agent in full. */
import { createClient } from '../connection.js';
import { type CliContext, CliError, EXIT } from '../context.js';
import { renderAgentFacts, renderCondition } from '../format/agent.js';
import { renderDiagnosis } from '../format/diagnosis.js';
import { createStyle } from '../format/style.js';
import { formatDuration, formatRelative } from '../format/time.js';

export interface AgentShowOptions {
  history?: string;
  json?: boolean;
  url?: string;
  token?: string;
  dataDir?: string;
}

export async function agentShow(ctx: CliContext, id: string, opts: AgentShowOptions): Promise<number> {
  const history = Number(opts.history ?? 10);
  if (!Number.isInteger(history) || history < 0 || history > 1000) {
    throw new CliError('--history must be an integer from 0 to 1000', EXIT.usage);
  }
  const { client } = createClient(ctx, opts);
  const [agent, diagnosis, conditions] = await Promise.all([
    client.getAgent(id),
    client.diagnoseAgent(id),
    history === 0 ? Promise.resolve([]) : client.agentConditions(id, { open: false, limit: history }),
  ]);
  if (opts.json) {
    ctx.printJson({ agent, diagnosis, conditions });
    return EXIT.ok;
  }
  const now = ctx.now();
  const style = createStyle(ctx.io.color);
  ctx.print(style.bold(`Agent ${agent.id}`));
  for (const line of renderAgentFacts(agent, now, style)) ctx.print(`  ${line}`);
  ctx.print('');
  for (const line of renderDiagnosis(diagnosis, now, style)) ctx.print(line);
  if (agent.conditions.length > 0) {
    ctx.print('');
    ctx.print(style.bold('Open conditions'));
    for (const c of agent.conditions) for (const line of renderCondition(c, now, style)) ctx.print(line);
  }
  if (conditions.length > 0) {
    ctx.print('');
    ctx.print(style.bold('Closed conditions, newest first'));
    for (const c of conditions) {
      const what = c.taskId === null ? c.condition : `${c.condition} on ${c.taskId}`;
      const lasted = c.closedAt === null ? '' : ` for ${formatDuration(Math.max(0, c.closedAt - c.since))}`;
      ctx.print(
        `  ${what}  ${style.dim(`opened ${formatRelative(c.since, now)}${lasted}; ${c.closeReason ?? 'closed'}`)}`,
      );
    }
  }
  return EXIT.ok;
}
