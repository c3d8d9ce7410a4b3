/**
 * `rouse agent --adapter codex|claude|shell --types …`: run an adapter as an agent (docs/adapters.md);
 * `rouse agent show <id>`: one agent in full — status, conditions with evidence, history, diagnosis.
 */
import type { Command } from 'commander';
import { action } from '../action.js';
import type { AgentShowOptions } from '../actions/agent.js';
import type { RunAgentCliOptions } from '../actions/run-agent.js';
import { withConnectionOptions } from '../connection-options.js';
import type { CliContext } from '../context.js';
import { durationOption } from '../duration-option.js';

const collect = (value: string, previous: string[]) => [...previous, value];

export function registerAgent(program: Command, ctx: CliContext): void {
  const agent = program
    .command('agent')
    .description(
      'run a coding-agent CLI or shell commands as an agent (`rouse agent --adapter … --types …`), or show one agent (`rouse agent show <id>`)',
    )
    .option('--adapter <name>', 'codex, claude or shell')
    .option('--types <t1,t2>', 'the task types to claim, comma-separated')
    .option('--concurrency <n>', 'tasks run at once (default: 1)')
    .option(
      '--work-dir <dir>',
      "the agent's own directory: work/<taskId>, homes/<cli>, spool (default: a fresh one per process under the temp dir)",
    )
    .option(
      '--bin <path>',
      "the CLI to run (default: codex / claude on PATH; shell: a fixed command instead of the payload's)",
    )
    .option('--cli-arg <arg>', 'passed to the CLI as it is (repeatable)', collect, [])
    .option('--cli-env <key=value>', "added to the CLI's environment (repeatable)", collect, [])
    .option(
      '--progress-regex <re>',
      'shell: progress from output lines matching this (after ::progress lines)',
    )
    .option(
      '--non-retryable-exit <code>',
      'shell: an exit code that fails the task for good (repeatable)',
      collect,
      [],
    )
    .option(
      '--wake <what>',
      "shell: what a wake does: restart (SIGINT to the command's group, then run it again; default), none, or a signal name sent to its group (e.g. SIGUSR1)",
    )
    .option(
      '--max-turns <n>',
      'codex, claude: turns a task may take (passed to Claude as --max-turns; the adapter checks it for both)',
    )
    .option(
      '--max-budget-usd <usd>',
      'claude: the dollars Claude Code may spend on a task (its own --max-budget-usd)',
    )
    .option(
      '--max-tokens <n>',
      "codex, claude: input + output tokens a task may spend (the adapter's own guard)",
    )
    .option('--max-cost-usd <usd>', "codex, claude: the dollars a task may spend (the adapter's own guard)")
    .addOption(
      durationOption(
        '--max-wall-clock <duration>',
        "codex, claude: how long one attempt of a task may run, e.g. 30m (the adapter's own guard)",
      ),
    )
    .option('--agent-type <type>', "the agent's type, which selects its policy (default: the adapter's name)")
    .option('--name <name>', 'a name for humans')
    .option('--json', 'print what happens as JSON lines (registered, claimed, completed, failed, …)')
    .option('--url <url>', 'coordinator URL (env: ROUSE_URL; default: from <data-dir>/server.json)')
    .option('--token <token>', 'enrollment token (env: ROUSE_AGENT_TOKEN; default: <data-dir>/agent.token)')
    .option('--data-dir <dir>', 'data directory of a local `rouse serve` (env: ROUSE_DATA_DIR)')
    .addHelpText(
      'after',
      `
Each task runs in its own process group, in the payload's cwd or <work-dir>/work/<taskId>, with the
CLI's home under <work-dir>/homes/<cli>; every output line goes to the task's log. SIGTERM or Ctrl-C
stops the agent: running tasks get a grace, then their process groups are killed and the tasks
handed back.

Payloads:
  codex, claude  {"prompt": "…", "cwd"?, "model"?, "maxTurns"?, "maxBudgetUsd"?, "maxTokens"?, "maxCostUsd"?, "maxWallClockMs"?}
                 result {"message", "usage", "costUsd"?, "files", "sessionId"}
  shell          {"command": ["make", "test"] | "a /bin/sh script", "args"?, "env"?, "stdin"?, "cwd"?, "resultFile"?}
                 result {"exitCode": 0, "output": <last stdout line>}, or the JSON of resultFile;
                 progress from "::progress 0.4 running tests" lines

Budget: --max-turns, --max-budget-usd, --max-tokens, --max-cost-usd and --max-wall-clock are the
defaults of every task this agent runs; a payload's own field (maxTurns, …) wins. A task that spends
past one is stopped, fails for good with code resource_runaway, and the agent's heartbeat reports
the spend, so a resource_runaway condition opens on the agent for that task.

Exit codes: 0 stopped by a signal, 1 failed, 2 bad options, 3 coordinator unreachable.

Examples:
  $ ROUSE_AGENT_TOKEN=… rouse agent --adapter codex --types codex --url http://127.0.0.1:7070
  $ rouse agent --adapter claude --types claude,review --concurrency 2 --work-dir /var/lib/rouse-claude
  $ rouse agent --adapter codex --types codex --cli-arg=-c --cli-arg='model_provider="corp"'
  $ rouse agent --adapter claude --types claude --max-turns 30 --max-budget-usd 2 --max-wall-clock 45m
  $ rouse agent --adapter shell --types build --non-retryable-exit 2 --json
  $ rouse agent --adapter shell --types crawl --wake SIGUSR1
  $ rouse submit build '{"command": "make test"}' --wait`,
    )
    .action(
      action(ctx, async (opts: RunAgentCliOptions) =>
        (await import('../actions/run-agent.js')).runAgentCommand(ctx, opts),
      ),
    );
  const show = agent
    .command('show')
    .description('an agent in full: status and why, open conditions with their evidence, recent history')
    .argument('<id>', 'agent id (agt_…)')
    .option('--history <n>', 'how many past conditions to show, 0–1000 (default: 10)')
    .option('--json', 'print {"agent", "diagnosis", "conditions"} as JSON');
  withConnectionOptions(show)
    .addHelpText(
      'after',
      `
Examples:
  $ rouse agent show agt_01JD…
  $ rouse agent show agt_01JD… --json | jq '.agent.conditions'`,
    )
    .action(
      action(ctx, async (id: string, opts: AgentShowOptions) =>
        (await import('../actions/agent.js')).agentShow(ctx, id, opts),
      ),
    );
}
