/** `rouse tasks`: list tasks, newest first, filtered. */
import { TASK_STATUSES } from '@rouse/protocol';
import type { Command } from 'commander';
import { action } from '../action.js';
import type { TasksOptions } from '../actions/tasks.js';
import { withConnectionOptions } from '../connection-options.js';
import type { CliContext } from '../context.js';
import { parseLabel, parsePositiveInteger } from '../parse.js';

export function registerTasks(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('tasks')
    .description('list tasks (filter by status, type, agent, labels)')
    .option('--status <list>', `only tasks in these states, comma-separated: ${TASK_STATUSES.join(', ')}`)
    .option('--type <type>', 'only tasks of this type')
    .option('--agent <agentId>', 'only tasks held by / last run on this agent')
    .option('--label <key=value>', 'only tasks with this label (repeatable: all must match)', parseLabel)
    .option('--limit <n>', 'tasks per page', parsePositiveInteger, 50)
    .option('--cursor <cursor>', 'continue from a previous page')
    .option('--all', 'fetch every page')
    .option('--json', 'print {"tasks": [...], "nextCursor": ...} as JSON');
  withConnectionOptions(cmd)
    .addHelpText(
      'after',
      `
Examples:
  $ rouse tasks
  $ rouse tasks --status timeout --type codex
  $ rouse tasks --status failed,timeout
  $ rouse tasks --label repo=acme/api --all --json | jq '.tasks | length'`,
    )
    .action(
      action(ctx, async (opts: TasksOptions) => (await import('../actions/tasks.js')).listTasks(ctx, opts)),
    );
}
