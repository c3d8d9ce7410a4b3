/** `rouse alerts`: what the watchdog told people — alerts grouped by agent type and condition. */
import type { Command } from 'commander';
import { action } from '../action.js';
import type { AlertsOptions } from '../actions/alerts.js';
import { withConnectionOptions } from '../connection-options.js';
import type { CliContext } from '../context.js';

export function registerAlerts(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('alerts')
    .description(
      'list alerts, newest first: which agents are in which condition, how severe, and how the notifications went',
    )
    .option('--state <list>', 'only these states, comma-separated: firing, resolved')
    .option('--limit <n>', 'at most this many, 1–1000 (default: 50)')
    .option('-f, --follow', 'then print every change as it happens, until Ctrl-C')
    .option('--json', 'print {"alerts": [...]} as JSON (with --follow: one JSON object per line)');
  withConnectionOptions(cmd)
    .addHelpText(
      'after',
      `
An alert is one per agent type and condition: forty agents stalling on one outage make one alert
with forty agents. It fires while any of them is in the condition and resolves when none is. Its
notifications go through the channels of the policy file (webhook, Slack, email); every delivery
attempt is kept with the alert.

Examples:
  $ rouse alerts
  $ rouse alerts --state firing
  $ rouse alerts -f --json`,
    )
    .action(
      action(ctx, async (opts: AlertsOptions) => (await import('../actions/alerts.js')).alerts(ctx, opts)),
    );
}
