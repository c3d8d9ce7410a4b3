/** `rouse retry <id>`: give a final failed/timeout task one more attempt. */
import type { Command } from 'commander';
import { action } from '../action.js';
import { createClient, withConnectionOptions } from '../connection.js';
import { type CliContext, EXIT } from '../context.js';
import { createStyle } from '../format/style.js';
import { formatAttempts } from '../format/task.js';

interface RetryOptions {
  json?: boolean;
  url?: string;
  token?: string;
  dataDir?: string;
}

export function registerRetry(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('retry')
    .description('give a final failed or timed-out task one more attempt')
    .argument('<id>', 'task id')
    .option('--json', 'print {"task": ...} as JSON');
  withConnectionOptions(cmd)
    .addHelpText(
      'after',
      `
Only final failed/timeout tasks can be retried (others: invalid_transition, exit 1).

Examples:
  $ rouse retry tsk_01JD…
  $ rouse tasks --status failed --json | jq -r '.tasks[].id' | xargs -n1 rouse retry`,
    )
    .action(action(ctx, (id: string, opts: RetryOptions) => retry(ctx, id, opts)));
}

async function retry(ctx: CliContext, id: string, opts: RetryOptions): Promise<number> {
  const { client } = createClient(ctx, opts);
  const task = await client.retryTask(id);
  if (opts.json) {
    ctx.printJson({ task });
    return EXIT.ok;
  }
  const style = createStyle(ctx.io.color);
  ctx.print(
    `retrying ${style.bold(task.id)} (${task.type}): ${style.status(task.status)}, attempts ${formatAttempts(task)}`,
  );
  return EXIT.ok;
}
