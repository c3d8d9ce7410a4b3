/** `rouse cancel <id>`: cancel a task that is not final; its holder learns it on its next heartbeat. */
import type { Command } from 'commander';
import { action } from '../action.js';
import type { CancelOptions } from '../actions/cancel.js';
import { withConnectionOptions } from '../connection-options.js';
import type { CliContext } from '../context.js';

export function registerCancel(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('cancel')
    .description('cancel a task (a running holder is told on its next heartbeat and its AbortSignal fires)')
    .argument('<id>', 'task id')
    .option('--reason <text>', 'why (kept in the event history)')
    .option('--json', 'print {"task": ...} as JSON');
  withConnectionOptions(cmd, 'admin')
    .addHelpText(
      'after',
      `
Cancelling a final task is an error (invalid_transition, exit 1).

Examples:
  $ rouse cancel tsk_01JD… --reason "superseded by PR 43"`,
    )
    .action(
      action(ctx, async (id: string, opts: CancelOptions) =>
        (await import('../actions/cancel.js')).cancel(ctx, id, opts),
      ),
    );
}
