/** `rouse agents`: registered agents, their status and what they hold. */
import type { Command } from 'commander';
import { action } from '../action.js';
import type { AgentsOptions } from '../actions/agents.js';
import { withConnectionOptions } from '../connection-options.js';
import type { CliContext } from '../context.js';

export function registerAgents(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('agents')
    .description(
      'list agents: derived status, open conditions, incarnation, held tasks, last heartbeat and poll',
    )
    .option(
      '--status <list>',
      'only these derived statuses, comma-separated: idle, running, at_risk, error, stalled, terminating, lost, terminated, left',
    )
    .option('--type <agentType>', 'only agents of this agent type')
    .option('--task-type <type>', 'only agents that serve this task type')
    .option('--json', 'print {"agents": [...]} as JSON');
  withConnectionOptions(cmd)
    .addHelpText(
      'after',
      `
STATUS is what the coordinator concludes, not only what the agent says: lost (its lease ran out),
stalled (heartbeats but no progress), at_risk (a dependency down, running away with memory or CPU,
an error that persists), error, terminating, running, idle; left when it said goodbye. CONDITIONS
lists what the watchdog sees open now; \`rouse agent show <id>\` and \`rouse why <id>\` explain them.

Examples:
  $ rouse agents
  $ rouse agents --status lost,stalled
  $ rouse agents --json | jq -r '.agents[] | select(.status == "lost") | .id'`,
    )
    .action(
      action(ctx, async (opts: AgentsOptions) => (await import('../actions/agents.js')).agents(ctx, opts)),
    );
}
