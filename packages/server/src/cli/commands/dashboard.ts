/** `rouse dashboard`: a one-time login URL for the dashboard (printed, or opened with --open). */
import type { Command } from 'commander';
import { action } from '../action.js';
import type { DashboardOptions } from '../actions/dashboard.js';
import { withConnectionOptions } from '../connection-options.js';
import type { CliContext } from '../context.js';

export function registerDashboard(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('dashboard')
    .description('print a one-time login URL for the dashboard in your browser (needs the admin token)')
    .option('--readonly', 'the session it opens may only read')
    .option('--open', 'open the URL in the default browser too')
    .option('--json', 'print {url, role, expiresAt}');
  withConnectionOptions(cmd, 'admin')
    .addHelpText(
      'after',
      `
The URL signs in once, within 5 minutes, and sets a session cookie in that browser (it ends after
12 hours without use, or on "Log out"). The token itself never goes into a URL. On the login page
you may also paste the admin or the read-only token.

Examples:
  $ rouse dashboard
  $ rouse dashboard --open
  $ rouse dashboard --readonly --url http://coordinator:7070 --token "$ROUSE_ADMIN_TOKEN"`,
    )
    .action(
      action(ctx, async (opts: DashboardOptions) =>
        (await import('../actions/dashboard.js')).dashboard(ctx, opts),
      ),
    );
}
