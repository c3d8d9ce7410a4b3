/** `rouse submit <type> [payload]`: create a task, optionally wait until it is final. */
import type { Command } from 'commander';
import { MIN_TIMING_MS } from '../../core/timing.js';
import { action } from '../action.js';
import type { SubmitOptions } from '../actions/submit.js';
import { withConnectionOptions } from '../connection-options.js';
import type { CliContext } from '../context.js';
import { durationOption, durationRangeOption } from '../duration-option.js';
import { parseInteger, parseLabel, parseList, parsePositiveInteger } from '../parse.js';

export function registerSubmit(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('submit')
    .description('create a task (and with --wait, follow it until it is final)')
    .argument('<type>', 'task type: the routing key agents subscribe to')
    .argument('[payload]', 'JSON payload, e.g. \'{"repo":"acme/api"}\'')
    .option('--payload-file <path>', 'read the JSON payload from a file (- for stdin)')
    .option('--idempotency-key <key>', 'same key and payload → the existing task instead of a new one')
    .option('--priority <n>', 'higher runs first', parseInteger)
    .option('--run-at <when>', 'not before this time: ISO date, epoch ms, or a delay like +30s')
    .option('--max-attempts <n>', 'attempts in total, retries included (default 4)', parsePositiveInteger)
    .option('--resumable', 'the next attempt receives the last checkpoint')
    .option(
      '--requires <deps>',
      'dependencies the task needs, comma-separated (e.g. openai,github)',
      parseList,
    )
    .option('--label <key=value>', 'a label (repeatable)', parseLabel)
    .addOption(
      durationOption('--heartbeat-interval <duration>', 'how often the agent must heartbeat, e.g. 5s', {
        min: MIN_TIMING_MS.heartbeatIntervalMs,
      }),
    )
    .addOption(
      durationRangeOption('--expected-duration <min..max>', 'derive the timing from it, e.g. 5s..5m'),
    )
    .addOption(
      durationOption('--execution-timeout <duration>', "the agent's own limit for one attempt, e.g. 10m", {
        min: MIN_TIMING_MS.executionTimeoutMs,
      }),
    )
    .option('-w, --wait', 'wait until the task is final, printing its transitions (exit 0 only if completed)')
    .option('--json', 'print the task as JSON');
  withConnectionOptions(cmd, 'admin')
    .addHelpText(
      'after',
      `
Examples:
  $ rouse submit report '{"repo":"acme/api"}'
  $ rouse submit codex --payload-file prompt.json --expected-duration 5s..5m --resumable --wait
  $ rouse submit email '{"to":"a@b.c"}' --idempotency-key welcome-42 --label team=growth --run-at +10m
  $ rouse submit report --json | jq -r .task.id`,
    )
    .action(
      action(ctx, async (type: string, payload: string | undefined, opts: SubmitOptions) =>
        (await import('../actions/submit.js')).submit(ctx, type, payload, opts),
      ),
    );
}
