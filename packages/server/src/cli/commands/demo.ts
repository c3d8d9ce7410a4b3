/**
 * `rouse demo`: an in-process coordinator on an ephemeral port, a small fleet of agents (healthy ones
 * and ones that crash, hang, fail or lose their write-back), ~20 tasks, and a live narrative from the
 * event stream — then `rouse why`-style diagnoses and a summary. Exits 0 by itself.
 */
import type { Command } from 'commander';
import { MIN_TIMING_MS } from '../../core/timing.js';
import { action } from '../action.js';
import type { DemoOptions } from '../actions/demo.js';
import type { CliContext } from '../context.js';
import { durationOption } from '../duration-option.js';
import { parsePositiveInteger } from '../parse.js';

export function registerDemo(program: Command, ctx: CliContext): void {
  program
    .command('demo')
    .description('watch Rouse handle crashing, hanging, failing and forgetful agents, live (~30 s)')
    .addOption(durationOption('--duration <duration>', 'stop after this long at most', { defaultMs: 60_000 }))
    .option(
      '--data-dir <dir>',
      'keep the demo database here (default: a temporary directory, deleted at the end)',
    )
    .option('--healthy <n>', 'number of healthy agents', parsePositiveInteger, 3)
    .addOption(
      durationOption('--heartbeat-interval <duration>', 'heartbeat interval of the demo tasks', {
        min: MIN_TIMING_MS.heartbeatIntervalMs,
        defaultMs: 500,
      }),
    )
    .option(
      '--json',
      'narrate on stderr; at the end print {"tasks": [{name, task}], "fencedWrites": n} as JSON on stdout',
    )
    .addHelpText(
      'after',
      `
What you will see (timings are short so it all happens in seconds):
  crashy-1  claims a task and dies before starting it         → claim timeout, retried elsewhere
  hangy-1   freezes mid-task, later tries to write its result → heartbeat timeout; its write is fenced (409)
  lossy-1   finishes but loses its write-back                 → write-back grace, completed from its upload
  flaky-1   hits a flaky upstream                             → retries with backoff 1s, 2s…; one non-retryable
  healthy-N do the rest (progress, logs, checkpoints); one task is cancelled mid-run

Examples:
  $ rouse demo
  $ rouse demo --duration 30s --healthy 5
  $ rouse demo --data-dir ./demo-data && rouse serve --data-dir ./demo-data   # explore afterwards`,
    )
    .action(action(ctx, async (opts: DemoOptions) => (await import('../actions/demo.js')).demo(ctx, opts)));
}
