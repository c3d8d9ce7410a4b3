/** `rouse interventions`: what was done to recover agents — by the ladder or by a person — and how it ended. */
import type { Command } from 'commander';
import { action } from '../action.js';
import type { InterventionsOptions } from '../actions/interventions.js';
import { withConnectionOptions } from '../connection-options.js';
import type { CliContext } from '../context.js';

export function registerInterventions(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('interventions')
    .description('list interventions on agents, newest first: what was done, why, by whom, and how it ended')
    .option('--agent <id>', 'only those on this agent')
    .option('--task <id>', 'only those about this task')
    .option('--state <list>', 'only these states, comma-separated: pending, held, succeeded, failed, skipped')
    .option('--limit <n>', 'at most this many, 1–1000 (default: 50)')
    .option('-f, --follow', 'then print every change as it happens, until Ctrl-C')
    .option('--json', 'print {"interventions": [...]} as JSON (with --follow: one JSON object per line)');
  withConnectionOptions(cmd)
    .addHelpText(
      'after',
      `
An intervention is one step taken to recover an agent: a wake, a restart, a terminate, … It is
pending until it is known to have worked (succeeded), not worked (failed) or been passed over
(skipped); held while an outage no action can cure lasts. \`rouse wake|restart|terminate <agent>\`
records one by hand; the agent's acknowledgement of the command ends it.

Examples:
  $ rouse interventions
  $ rouse interventions --agent agt_01JD… --state pending,held
  $ rouse interventions -f`,
    )
    .action(
      action(ctx, async (opts: InterventionsOptions) =>
        (await import('../actions/interventions.js')).interventions(ctx, opts),
      ),
    );
}

const MANUAL = [
  [
    'wake',
    'wake the agent: its SDK fires onWake and sets ctx.interrupted (a supervised process also gets a signal)',
  ],
  ['restart', 'ask the agent to restart (snapshot first when it can); its supervisor carries it out'],
  ['terminate', 'ask the agent to stop for good; its supervisor kills it if it does not'],
] as const;

/** `rouse wake|restart|terminate <agent>`: send the command, recorded as a manual intervention. */
export function registerManualCommands(program: Command, ctx: CliContext): void {
  for (const [type, what] of MANUAL) {
    const cmd = program
      .command(type)
      .description(`${what}; recorded as a manual intervention`)
      .argument('<agent>', 'agent id')
      .option('--reason <text>', 'why (kept with the intervention)')
      .option('--json', 'print {"commandId", "intervention"} as JSON');
    withConnectionOptions(cmd, 'admin')
      .addHelpText(
        'after',
        `
The command is delivered on the agent's next heartbeat; the agent's acknowledgement ends the
intervention (done → succeeded, failed → failed, unsupported → skipped). Needs the admin token.

Example:
  $ rouse ${type} agt_01JD… --reason "no progress since lunch"
  $ rouse interventions --agent agt_01JD…`,
      )
      .action(
        action(ctx, async (agentId: string, opts: { reason?: string; json?: boolean }) =>
          (await import('../actions/interventions.js')).sendManual(ctx, type, agentId, opts),
        ),
      );
  }
}
