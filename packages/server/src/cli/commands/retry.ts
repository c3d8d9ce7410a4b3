/** `rouse retry <id>`: give a final failed/timeout task one more attempt. */
import type { Command } from 'commander';
import { action } from '../action.js';
import type { RetryOptions } from '../actions/retry.js';
import { withConnectionOptions } from '../connection-options.js';
import type { CliContext } from '../context.js';

export function registerRetry(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('retry')
    .description('give a final failed or timed-out task one more attempt')
    .argument('<id>', 'task id')
    .option('--json', 'print {"task": ...} as JSON');
  withConnectionOptions(cmd, 'admin')
    .addHelpText(
      'after',
      `
Only final failed/timeout tasks can be retried (others: invalid_transition, exit 1).

Examples:
  $ rouse retry tsk_01JD…
  $ rouse tasks --status failed --json | jq -r '.tasks[].id' | xargs -n1 rouse retry`,
    )
    .action(
      action(ctx, async (id: string, opts: RetryOptions) =>
        (await import('../actions/retry.js')).retry(ctx, id, opts),
      ),
    );
}
