/** `rouse agent show <id>`: one agent in full — status, conditions with evidence, history, diagnosis. */
import type { Command } from 'commander';
import { action } from '../action.js';
import type { AgentShowOptions } from '../actions/agent.js';
import { withConnectionOptions } from '../connection-options.js';
import type { CliContext } from '../context.js';

export function registerAgent(program: Command, ctx: CliContext): void {
  const agent = program.command('agent').description('one agent: `rouse agent show <id>`');
  const show = agent
    .command('show')
    .description('an agent in full: status and why, open conditions with their evidence, recent history')
    .argument('<id>', 'agent id (agt_…)')
    .option('--history <n>', 'how many past conditions to show (default: 10)', '10')
    .option('--json', 'print {"agent", "diagnosis", "conditions"} as JSON');
  withConnectionOptions(show)
    .addHelpText(
      'after',
      `
Examples:
  $ rouse agent show agt_01JD…
  $ rouse agent show agt_01JD… --json | jq '.agent.conditions'`,
    )
    .action(
      action(ctx, async (id: string, opts: AgentShowOptions) =>
        (await import('../actions/agent.js')).agentShow(ctx, id, opts),
      ),
    );
}
