/** `rouse logs <id>`: a task's log lines, optionally following new ones live. */
import type { Command } from 'commander';
import { action } from '../action.js';
import type { LogsOptions } from '../actions/logs.js';
import { withConnectionOptions } from '../connection-options.js';
import type { CliContext } from '../context.js';
import { parseInteger } from '../parse.js';

export function registerLogs(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('logs')
    .description("print a task's logs (all attempts), or follow them live with -f")
    .argument('<id>', 'task id')
    .option('-f, --follow', 'keep printing new lines until the task is final (Ctrl-C stops)')
    .option('--after <seq>', 'only lines after this sequence number', parseInteger)
    .option('--json', 'print {"lines": [...]} as JSON (with --follow: one JSON line per log line)');
  withConnectionOptions(cmd)
    .addHelpText(
      'after',
      `
Examples:
  $ rouse logs tsk_01JD…
  $ rouse logs -f tsk_01JD…
  $ rouse logs tsk_01JD… --after 120 --json`,
    )
    .action(
      action(ctx, async (id: string, opts: LogsOptions) =>
        (await import('../actions/logs.js')).logs(ctx, id, opts),
      ),
    );
}
