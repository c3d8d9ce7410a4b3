/** `rouse cancel <id>`: cancel a task that is not final; its holder learns it on its next heartbeat. */
import type { Command } from 'commander';
import { action } from '../action.js';
import { createClient, withConnectionOptions } from '../connection.js';
import { type CliContext, EXIT } from '../context.js';
import { createStyle } from '../format/style.js';

interface CancelOptions {
  reason?: string;
  json?: boolean;
  url?: string;
  token?: string;
  dataDir?: string;
}

export function registerCancel(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('cancel')
    .description('cancel a task (a running holder is told on its next heartbeat and its AbortSignal fires)')
    .argument('<id>', 'task id')
    .option('--reason <text>', 'why (kept in the event history)')
    .option('--json', 'print {"task": ...} as JSON');
  withConnectionOptions(cmd)
    .addHelpText(
      'after',
      `
Cancelling a final task is an error (invalid_transition, exit 1).

Examples:
  $ rouse cancel tsk_01JD… --reason "superseded by PR 43"`,
    )
    .action(action(ctx, (id: string, opts: CancelOptions) => cancel(ctx, id, opts)));
}

async function cancel(ctx: CliContext, id: string, opts: CancelOptions): Promise<number> {
  const { client } = createClient(ctx, opts);
  const task = await client.cancelTask(id, opts.reason);
  if (opts.json) {
    ctx.printJson({ task });
    return EXIT.ok;
  }
  const style = createStyle(ctx.io.color);
  ctx.print(
    `${style.status(task.status)} ${style.bold(task.id)} (${task.type})${opts.reason ? `: ${opts.reason}` : ''}`,
  );
  return EXIT.ok;
}
