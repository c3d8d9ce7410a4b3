/** `rouse show <id>`: one task in full, with its event history. */
import type { Command } from 'commander';
import { action } from '../action.js';
import type { ShowOptions } from '../actions/show.js';
import { withConnectionOptions } from '../connection-options.js';
import type { CliContext } from '../context.js';

export function registerShow(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('show')
    .description('show a task and its event history (every transition: who, when, why)')
    .argument('<id>', 'task id')
    .option('--json', 'print {"task": ..., "events": [...]} as JSON');
  withConnectionOptions(cmd)
    .addHelpText(
      'after',
      `
Examples:
  $ rouse show tsk_01JD…
  $ rouse show tsk_01JD… --json | jq '.events[] | [.from, .to, .reason]'`,
    )
    .action(
      action(ctx, async (id: string, opts: ShowOptions) =>
        (await import('../actions/show.js')).show(ctx, id, opts),
      ),
    );
}
