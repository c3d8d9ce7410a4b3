/**
 * Running an adapter as an agent (`rouse agent --adapter codex|claude|shell --types …`): an SDK
 * Worker whose handler, for every type given, is the shell adapter or the generic coding-agent
 * adapter with the flavor of that name (flavors.ts); it runs until `untilStopped` resolves (the CLI:
 * SIGTERM or Ctrl-C), then stops gracefully — running tasks get the worker's shutdown grace, then
 * their CLIs' process groups are stopped and the tasks handed back.
 *
 * The data directory (`workDir`) holds `work/<taskId>` (a task's working directory when its payload
 * names none), `homes/<flavor>` (the CLI's home, its sessions) and `spool/` (results not delivered
 * yet). Two agents must not share one: the default is a fresh one per process.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Task, type TaskHandler, Worker } from '@rouse/sdk';
import type { CliTypeDefaults } from './cli-payload.js';
import { cliTaskHandler } from './cli-task.js';
import { findExecutable } from './executable.js';
import { flavorNamed, flavorNames } from './flavors.js';
import { type ShellWake, shellTaskHandler } from './shell/shell-adapter.js';

export interface RunAgentOptions {
  /** `shell`, or a flavor's name (`codex`, `claude`). */
  adapter: string;
  /** The task types to claim. */
  types: string[];
  url: string;
  /** The enrollment (or admin) token. */
  token: string;
  /** @default the adapter's name */
  agentType?: string;
  /** @default `${adapter}@${hostname}/${pid}` (the SDK's default with the adapter) */
  name?: string;
  /** Tasks run at once. @default 1 */
  concurrency?: number;
  /** The agent's data directory. @default `<tmp>/rouse-agent/<adapter>-<pid>` */
  workDir?: string;
  /** The CLI (or, for shell, a fixed command) to run. @default the flavor's on PATH; shell: the payload's */
  bin?: string;
  /** Passed to the CLI as they are. @default [] */
  cliArgs?: string[];
  /** Added to the CLI's environment. @default {} */
  cliEnv?: Record<string, string>;
  /** Shell: progress from lines matching this (after `::progress`). */
  progressRegex?: RegExp;
  /** Shell: exit codes that fail a task for good. */
  nonRetryableExitCodes?: number[];
  /** Shell: what a wake does (restart the command, a signal to its group, nothing). @default 'restart' */
  shellWake?: ShellWake;
  /**
   * Codex, Claude: budget limits (maxTurns, maxBudgetUsd, maxTokens, maxCostUsd, maxWallClockMs) for
   * every task this agent runs; a payload's own fields win. @default none
   */
  budget?: CliTypeDefaults;
  /** Where the CLIs' environment starts from. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** What happens, as it happens. */
  onEvent: (event: RunAgentEvent) => void;
  /** Resolves (with why) when the agent should stop. */
  untilStopped: Promise<string>;
  /** How long running tasks may finish once stopping. @default 10000 */
  shutdownGraceMs?: number;
}

export type RunAgentEvent =
  | { event: 'registered'; agentId: string; name: string; adapter: string; types: string[]; workDir: string }
  | { event: 'claimed'; taskId: string; type: string; attempt: number }
  | { event: 'completed'; taskId: string }
  | { event: 'failed'; taskId: string; code: string; message: string; retryable: boolean }
  | { event: 'cancelled'; taskId: string }
  | { event: 'lease_lost'; taskId: string; code: string }
  | { event: 'error'; op: string; message: string }
  | { event: 'stopping'; reason: string }
  | { event: 'stopped' };

/** A bad option of `runAgent` (the CLI: a usage error). */
export class AgentOptionsError extends Error {}

/** The `--adapter` names this build accepts. */
export function adapterNames(env: NodeJS.ProcessEnv = process.env): string[] {
  return ['shell', ...flavorNames(env)];
}

/** The handler for every type of this agent. */
export function adapterHandler(
  o: Omit<RunAgentOptions, 'onEvent' | 'untilStopped'> & { workDir: string },
): TaskHandler {
  const common = {
    dataDir: o.workDir,
    ...(o.bin !== undefined ? { bin: o.bin } : {}),
    extraArgs: o.cliArgs ?? [],
    extraEnv: o.cliEnv ?? {},
    ...(o.env !== undefined ? { env: o.env } : {}),
  };
  if (o.adapter === 'shell') {
    return shellTaskHandler({
      ...common,
      ...(o.progressRegex !== undefined ? { progressRegex: o.progressRegex } : {}),
      ...(o.nonRetryableExitCodes !== undefined ? { nonRetryableExitCodes: o.nonRetryableExitCodes } : {}),
      ...(o.shellWake !== undefined ? { wake: o.shellWake } : {}),
    });
  }
  const flavor = flavorNamed(o.adapter, o.env);
  if (flavor === undefined) {
    throw new AgentOptionsError(`unknown adapter "${o.adapter}": one of ${adapterNames(o.env).join(', ')}`);
  }
  const budget = o.budget ?? {};
  const typeDefaults = Object.fromEntries(o.types.map((t) => [t, { ...budget }]));
  return cliTaskHandler({ ...common, flavor, typeDefaults });
}

/**
 * The program every task of this agent runs — the CLI (`bin`, else the flavor's on the PATH), or the
 * shell adapter's fixed `bin` — must be there and executable before the agent registers: otherwise it
 * would claim task after task only to fail each at its start. Throws {@link AgentOptionsError} saying
 * what was looked for and how to point at it.
 */
export function checkAgentProgram(
  options: Pick<RunAgentOptions, 'adapter' | 'bin' | 'cliEnv' | 'env'>,
  cwd: string = process.cwd(),
): void {
  const env = { ...(options.env ?? process.env), ...options.cliEnv };
  if (options.adapter === 'shell') {
    if (options.bin === undefined) return; // each task names its own command
    const lookup = findExecutable(options.bin, env, cwd);
    if (!lookup.found) throw new AgentOptionsError(`--bin ${options.bin} cannot be run: ${lookup.why}`);
    return;
  }
  const flavor = flavorNamed(options.adapter, options.env);
  if (flavor === undefined) return; // adapterHandler says so
  const lookup = findExecutable(options.bin ?? flavor.defaultBin, env, cwd);
  if (lookup.found) return;
  throw new AgentOptionsError(
    options.bin === undefined
      ? `the ${flavor.name} CLI cannot be run: ${lookup.why}; install it, or give its path with --bin /path/to/${flavor.defaultBin}`
      : `the ${flavor.name} CLI cannot be run: ${lookup.why}; check --bin (the path to the ${flavor.name} executable)`,
  );
}

/**
 * Check the agent's program ({@link checkAgentProgram}), register, run tasks until stopped, stop
 * gracefully; resolves 0. Bad options and a program that cannot run throw {@link AgentOptionsError}.
 *
 * A program that is gone later (a task failed `bin_not_found`: its start found the CLI or `--bin`
 * missing or not executable) stops the agent as `untilStopped` would, so that it claims no more tasks
 * only to fail them: running tasks get the shutdown grace, and it resolves 1.
 */
export async function runAgent(options: RunAgentOptions): Promise<number> {
  const { onEvent } = options;
  if (options.types.length === 0) throw new AgentOptionsError('--types needs at least one task type');
  const workDir = options.workDir ?? join(tmpdir(), 'rouse-agent', `${options.adapter}-${process.pid}`);
  const handler = adapterHandler({ ...options, workDir });
  checkAgentProgram(options);
  let worker: Worker;
  try {
    worker = new Worker({
      url: options.url,
      token: options.token,
      agentType: options.agentType ?? options.adapter,
      ...(options.name !== undefined ? { name: options.name } : {}),
      taskTypes: options.types,
      handler,
      concurrency: options.concurrency ?? 1,
      spoolDir: join(workDir, 'spool'),
      shutdownSignals: false,
      shutdownGraceMs: options.shutdownGraceMs ?? 10_000,
    });
  } catch (err) {
    throw new AgentOptionsError((err as Error).message);
  }
  const id = (t: Task) => t.id;
  let programGone = (_why: string): void => {};
  const gone = new Promise<string>((resolve) => {
    programGone = resolve;
  });
  worker.on('claimed', ({ task }) =>
    onEvent({ event: 'claimed', taskId: id(task), type: task.type, attempt: task.attempt }),
  );
  worker.on('completed', ({ task }) => onEvent({ event: 'completed', taskId: id(task) }));
  worker.on('failed', ({ task, error }) => {
    onEvent({
      event: 'failed',
      taskId: id(task),
      code: error.code,
      message: error.message,
      retryable: error.retryable,
    });
    if (error.code === 'bin_not_found') programGone(`${error.message}; this agent takes no more tasks`);
  });
  worker.on('cancelled', ({ task }) => onEvent({ event: 'cancelled', taskId: id(task) }));
  worker.on('leaseLost', ({ task, code }) => onEvent({ event: 'lease_lost', taskId: id(task), code }));
  worker.on('error', (e) =>
    onEvent({
      event: 'error',
      op: e.op,
      message: e.error instanceof Error ? e.error.message : String(e.error),
    }),
  );
  // Registering waits for a coordinator that is not up yet (up to the SDK's start timeout); a stop
  // meanwhile (Ctrl-C, SIGTERM) ends the wait at once.
  const started = worker.start().then(() => null);
  const stoppedEarly = await Promise.race([started, options.untilStopped]);
  if (stoppedEarly !== null) {
    onEvent({ event: 'stopping', reason: stoppedEarly });
    await worker.stop();
    await started.catch(() => {});
    onEvent({ event: 'stopped' });
    return 0;
  }
  onEvent({
    event: 'registered',
    agentId: worker.agentId ?? '',
    name: options.name ?? '',
    adapter: options.adapter,
    types: options.types,
    workDir,
  });
  let broken = false;
  const why = await Promise.race([
    options.untilStopped,
    gone.then((reason) => {
      broken = true;
      return reason;
    }),
  ]);
  onEvent({ event: 'stopping', reason: why });
  await worker.stop();
  onEvent({ event: 'stopped' });
  return broken ? 1 : 0;
}
