/** `rouse supervise -c host.yaml`: run an agent host's programs under a supervisor (docs/design.md §6.6). */
import type { Command } from 'commander';
import { action } from '../action.js';
import type { SuperviseOptions } from '../actions/supervise.js';
import type { CliContext } from '../context.js';

export function registerSupervise(program: Command, ctx: CliContext): void {
  program
    .command('supervise')
    .description(
      "run an agent host's programs: restart them with backoff, sample their processes, heartbeat for them, carry out the watchdog's commands",
    )
    .requiredOption('-c, --config <file>', 'the host config (YAML): name, programs')
    .option(
      '--json',
      'print what happens as JSON lines (started, exited, restart_scheduled, fatal, command, …)',
    )
    .option(
      '--echo',
      'also print every line the children write, as [<key>] <line> (with --json: an output event)',
    )
    .addHelpText(
      'after',
      `
The coordinator's URL is the config's \`coordinator\` (else ROUSE_URL); the enrollment token comes from
ROUSE_AGENT_TOKEN and is passed to every child with ROUSE_URL, ROUSE_AGENT_KEY (<name>/<program>-<n>),
ROUSE_AGENT_TYPE and ROUSE_SUPERVISOR_ID. One supervisor per name: a second one is refused while the
first is live. SIGTERM or Ctrl-C stops every child (its stop signal, grace, then SIGKILL to its process
group) and leaves.

host.yaml:
  coordinator: http://127.0.0.1:7070
  name: host-3
  programs:
    - name: reviewer
      command: ["node", "reviewer.js"]   # or a string run by /bin/sh
      instances: 2                        # keys host-3/reviewer-1, host-3/reviewer-2
      agent_type: llm_chain
      env: { OPENAI_BASE_URL: "http://127.0.0.1:9000" }
      restart: { backoff: 1s, max_backoff: 5m, reset_after: 10m, budget: 5, window: 10m }
      stop: { signal: SIGTERM, grace: 15s }
      wake_signal: SIGUSR1
    - name: indexer                       # a plain process: the supervisor heartbeats for it
      command: ./index.sh
      sdk: false
      progress: { output_regex: "step (\\\\d+)/(\\\\d+)" }

Exit codes: 0 stopped by a signal, 1 refused (the name is live elsewhere) or failed, 2 bad config,
3 coordinator unreachable.

Examples:
  $ ROUSE_AGENT_TOKEN=… rouse supervise -c host.yaml
  $ rouse supervise -c host.yaml --json | jq -c 'select(.event == "fatal")'`,
    )
    .action(
      action(ctx, async (opts: SuperviseOptions) =>
        (await import('../actions/supervise.js')).supervise(ctx, opts),
      ),
    );
}
