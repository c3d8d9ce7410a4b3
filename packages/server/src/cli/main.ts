/**
 * The `rouse` command line: `main(argv)` builds the commander program, runs one subcommand and
 * returns its exit code (the bin sets `process.exitCode`). Nothing happens at import time.
 *
 * A command loads what it uses: `commands/<name>.ts` only declares a subcommand (flags, help) and
 * imports its `actions/<name>.ts` when it runs, so `rouse tasks` or `rouse --help` never load the
 * server (fastify, pg, better-sqlite3), and help does not load the HTTP client either.
 */
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { registerAgent } from './commands/agent.js';
import { registerAgents } from './commands/agents.js';
import { registerAlerts } from './commands/alerts.js';
import { registerCancel } from './commands/cancel.js';
import { registerDashboard } from './commands/dashboard.js';
import { registerDemo } from './commands/demo.js';
import { registerInterventions, registerManualCommands } from './commands/interventions.js';
import { registerLogs } from './commands/logs.js';
import { registerMigrate } from './commands/migrate.js';
import { registerPolicy } from './commands/policy.js';
import { registerRetry } from './commands/retry.js';
import { registerServe } from './commands/serve.js';
import { registerShow } from './commands/show.js';
import { registerSubmit } from './commands/submit.js';
import { registerSupervise } from './commands/supervise.js';
import { registerTasks } from './commands/tasks.js';
import { registerWhy } from './commands/why.js';
import { CliContext, type CliDeps, EXIT } from './context.js';
import { reportError } from './errors.js';

const ROOT_HELP = `
Exit codes:
  0  success
  1  the coordinator answered with an error, or (submit --wait) the task did not complete
  2  usage error: unknown command or flag, bad option value (a duration without its unit,
     a --url / ROUSE_URL that is not http(s)://host:port)
  3  the coordinator cannot be reached (run \`rouse serve\`, or pass --url / set ROUSE_URL)

Durations take a unit: 500ms, 5s, 1.5m, 2h; a bare number is refused.

Client commands find the coordinator through --url / ROUSE_URL and --token / ROUSE_TOKEN, else
through the data directory of a local \`rouse serve\` (--data-dir, default ./.rouse: server.json
and admin.token).

Examples:
  $ rouse serve                                  # coordinator on SQLite in ./.rouse
  $ rouse submit report '{"repo":"acme/api"}' --wait
  $ rouse tasks --status running
  $ rouse why tsk_01JD…                          # why isn't my task running?
  $ rouse dashboard --open                       # the dashboard in your browser
  $ rouse demo                                   # watch crashes, timeouts, retries and fencing live
`;

function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/**
 * A reader that went away (`rouse tasks | head -3`) ends the command quietly with exit 0, as Unix
 * tools do, instead of an unhandled EPIPE error and a stack trace.
 */
function exitQuietlyOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
}

function defaultDeps(): CliDeps {
  const stdoutTTY = Boolean(process.stdout.isTTY);
  return {
    io: {
      out: (s) => process.stdout.write(s),
      err: (s) => process.stderr.write(s),
      isTTY: stdoutTTY,
      errTTY: Boolean(process.stderr.isTTY),
      color: stdoutTTY && !process.env.NO_COLOR && process.env.TERM !== 'dumb',
    },
    env: process.env,
    cwd: process.cwd(),
    now: () => Date.now(),
    onInterrupt(handler) {
      const onSig = (sig: NodeJS.Signals) => handler(sig);
      process.on('SIGINT', onSig);
      process.on('SIGTERM', onSig);
      return () => {
        process.off('SIGINT', onSig);
        process.off('SIGTERM', onSig);
      };
    },
  };
}

/** Build the program. Exported for tests that want to inspect the commands. */
export function buildProgram(ctx: CliContext): Command {
  const program = new Command('rouse')
    .description('Rouse: a task coordinator and agent watchdog for AI agent work')
    .version(ctx.version, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .addHelpCommand('help [command]', 'show help for a command')
    .showSuggestionAfterError(true)
    .allowUnknownOption(false)
    .allowExcessArguments(false)
    // a command's options only before its subcommand (`rouse agent --adapter …` vs `rouse agent show <id> --json`)
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({
      writeOut: (s) => ctx.io.out(s),
      writeErr: (s) => ctx.io.err(s),
    })
    .addHelpText('after', ROOT_HELP);
  // commander copies these settings into subcommands created with .command()
  registerServe(program, ctx);
  registerMigrate(program, ctx);
  registerPolicy(program, ctx);
  registerSubmit(program, ctx);
  registerTasks(program, ctx);
  registerShow(program, ctx);
  registerWhy(program, ctx);
  registerDashboard(program, ctx);
  registerLogs(program, ctx);
  registerAgents(program, ctx);
  registerAgent(program, ctx);
  registerInterventions(program, ctx);
  registerAlerts(program, ctx);
  registerManualCommands(program, ctx);
  registerCancel(program, ctx);
  registerRetry(program, ctx);
  registerSupervise(program, ctx);
  registerDemo(program, ctx);
  return program;
}

/**
 * Run the CLI. `argv` is `process.argv` (node, script, ...args). Returns the exit code:
 * 0 ok, 1 error from the server / task not completed, 2 usage, 3 coordinator unreachable.
 */
export async function main(argv: readonly string[], deps: Partial<CliDeps> = {}): Promise<number> {
  if (deps.io === undefined) {
    exitQuietlyOnClosedPipe(process.stdout);
    exitQuietlyOnClosedPipe(process.stderr);
  }
  const ctx = new CliContext({ ...defaultDeps(), script: argv[1], ...deps }, readVersion());
  const program = buildProgram(ctx);
  const args = argv.slice(2);
  if (args.length === 0) {
    program.outputHelp({ error: true });
    return EXIT.usage;
  }
  try {
    await program.parseAsync(args, { from: 'user' });
    return ctx.exitCode;
  } catch (err) {
    return await reportError(ctx, err);
  }
}
