/**
 * `rouse demo`: an in-process coordinator on an ephemeral port and a live narrative from its event
 * stream, in one of two acts. `tasks` (the default): a small fleet of agents (healthy ones and ones
 * that crash, hang, fail or lose their write-back), ~20 tasks, then `rouse why`-style diagnoses and a
 * summary. `watchdog`: four agent programs under `rouse supervise` that stall, hang, leak and hit a
 * rate-limited API, recovered by the policy's ladders, then the interventions and alerts. Exits 0 by itself.
 */
import { type Command, Option } from 'commander';
import { MIN_TIMING_MS } from '../../core/timing.js';
import { action } from '../action.js';
import type { DemoOptions } from '../actions/demo.js';
import type { CliContext } from '../context.js';
import { durationOption } from '../duration-option.js';
import { parsePositiveInteger } from '../parse.js';

export function registerDemo(program: Command, ctx: CliContext): void {
  program
    .command('demo')
    .description(
      'watch Rouse recover failing tasks, or with --act watchdog failing agents under rouse supervise, live (~30 s)',
    )
    .addOption(
      new Option('--act <act>', 'which act: tasks (failing tasks) or watchdog (failing agents)')
        .choices(['tasks', 'watchdog'])
        .default('tasks'),
    )
    .addOption(
      durationOption(
        '--duration <duration>',
        'stop after this long at most (default: 60s; 90s for --act watchdog)',
      ),
    )
    .option(
      '--data-dir <dir>',
      'keep the demo database here (default: a temporary directory, deleted at the end)',
    )
    .option('--healthy <n>', 'number of healthy agents (tasks act)', parsePositiveInteger, 3)
    .addOption(
      durationOption('--heartbeat-interval <duration>', 'heartbeat interval of the demo tasks (tasks act)', {
        min: MIN_TIMING_MS.heartbeatIntervalMs,
        defaultMs: 500,
      }),
    )
    .option(
      '--json',
      'narrate on stderr; at the end print JSON on stdout: {"tasks": [{name, task}], "fencedWrites": n}, or with --act watchdog {"agents", "interventions", "alerts", "deliveries", "agentEvents", "finished"}',
    )
    .addHelpText(
      'after',
      `
What you will see in the tasks act (timings are short so it all happens in seconds):
  crashy-1  claims a task and dies before starting it         → claim timeout, retried elsewhere
  hangy-1   freezes mid-task, later tries to write its result → heartbeat timeout; its write is fenced (409)
  lossy-1   finishes but loses its write-back                 → write-back grace, completed from its upload
  flaky-1   hits a flaky upstream                             → retries with backoff 1s, 2s…; one non-retryable
  healthy-N do the rest (progress, logs, checkpoints); one task is cancelled mid-run

What you will see in the watchdog act (~20-40 s): a policy file with a recovery ladder per agent
type, alerts to a webhook the demo serves on 127.0.0.1, and rouse supervise running four SDK monitors:
  staller-1   its progress stops          → stalled → send_signal SIGUSR1 (a wake) → it moves again
  hanger-1    freezes itself (SIGSTOP)    → heartbeat timeout → snapshot_and_restart through its
                                            supervisor → the new incarnation resumes from its snapshot
  leaker-1    its RSS passes 192 MiB      → resource runaway → restarted; leaks again → terminated
  api-user-1  llm-api answers 429         → dependency_down: one alert delivered, its restart held
                                            (a restart would not help); llm-api comes back, it moves on
Then the interventions (rouse interventions) and alerts (rouse alerts), and everything stops.

Examples:
  $ rouse demo
  $ rouse demo --duration 30s --healthy 5
  $ rouse demo --act watchdog
  $ rouse demo --act watchdog --json > outcome.json
  $ rouse demo --data-dir ./demo-data && rouse serve --data-dir ./demo-data   # explore afterwards`,
    )
    .action(action(ctx, async (opts: DemoOptions) => (await import('../actions/demo.js')).demo(ctx, opts)));
}
