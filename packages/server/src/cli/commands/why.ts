/** `rouse why <id>`: why is this task where it is? The coordinator's diagnosis, made readable. */
import type { Command } from 'commander';
import { action } from '../action.js';
import type { WhyOptions } from '../actions/why.js';
import { withConnectionOptions } from '../connection-options.js';
import type { CliContext } from '../context.js';

export function registerWhy(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('why')
    .description(
      "explain why a task is where it is (why isn't it running?), or why an agent is lost, stalled or at risk",
    )
    .argument('<id>', 'task id (tsk_…) or agent id (agt_…)')
    .option(
      '--json',
      'print the diagnosis as JSON: {taskId, status, summary, reasons, suggestions, at} for a task; {agentId, status, summary, reasons, suggestions, recovery, at} for an agent',
    );
  withConnectionOptions(cmd)
    .addHelpText(
      'after',
      `
Reasons carry evidence: when agents of the type last polled, how late a heartbeat is, when a
backoff ends, the position in the queue. Reason codes: no_agents_for_type, agents_busy,
agents_not_polling, scheduled_later, backoff_wait, dependency_unavailable, claimed_not_started,
heartbeat_late, progress_stalled, awaiting_write_back, queued_behind, exhausted_attempts,
non_retryable_error, cancelled, completed, running_normally, claimable_now, agents_lost.

For an agent: its open conditions with their evidence (heartbeat_timeout, progress_stalled,
dependency_down, resource_runaway, error_persisting), or left, terminated, terminating,
reported_error, never_heartbeat, in_quiet_period, healthy.

Examples:
  $ rouse why tsk_01JD…
  $ rouse why agt_01JD…
  $ rouse why tsk_01JD… --json | jq -r '.reasons[].code'`,
    )
    .action(
      action(ctx, async (id: string, opts: WhyOptions) =>
        (await import('../actions/why.js')).why(ctx, id, opts),
      ),
    );
}
