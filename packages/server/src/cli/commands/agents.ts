/** `rouse agents`: registered agents, their status and what they hold. */
import type { Command } from 'commander';
import { action } from '../action.js';
import type { AgentsOptions } from '../actions/agents.js';
import { withConnectionOptions } from '../connection-options.js';
import type { CliContext } from '../context.js';

export function registerAgents(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('agents')
    .description('list registered agents: status, task types, held tasks, last heartbeat and poll')
    .option('--json', 'print {"agents": [...]} as JSON');
  withConnectionOptions(cmd)
    .addHelpText(
      'after',
      `
Examples:
  $ rouse agents
  $ rouse agents --json | jq -r '.agents[] | select(.status == "lost") | .id'`,
    )
    .action(
      action(ctx, async (opts: AgentsOptions) => (await import('../actions/agents.js')).agents(ctx, opts)),
    );
}
