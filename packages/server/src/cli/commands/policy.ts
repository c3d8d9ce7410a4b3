/** `rouse policy check <file>`: validate a policy file without a coordinator. */
import type { Command } from 'commander';
import { action } from '../action.js';
import type { PolicyCheckOptions } from '../actions/policy.js';
import type { CliContext } from '../context.js';

export function registerPolicy(program: Command, ctx: CliContext): void {
  const policy = program
    .command('policy')
    .description("the watchdog's policy file: check one before a coordinator loads it");
  policy
    .command('check')
    .description('validate a policy file: every error with its file, line, column and field')
    .argument('<file>', 'the policy file (YAML)')
    .option('--json', 'print {"valid", "errors", "policies"} as JSON')
    .addHelpText(
      'after',
      `
Exit code 0 when the file is valid, 1 when it is not (each error on stderr as file:line:column:
field: message, the way editors read them), 2 when it cannot be read.

Examples:
  $ rouse policy check rouse.yaml
  $ rouse policy check .rouse/policies.yaml --json | jq '.errors[].path'`,
    )
    .action(
      action(ctx, async (file: string, opts: PolicyCheckOptions) =>
        (await import('../actions/policy.js')).policyCheck(ctx, file, opts),
      ),
    );
}
