/** `rouse agent --adapter …`: an adapter (`@rouse/agent-host`) as an agent, its events printed. */
import { readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { SIGNAL_NAMES, type SignalName } from '@rouse/protocol';
import { resolveConnection } from '../connection.js';
import { type CliContext, CliError, EXIT } from '../context.js';
import { resolveDataDir } from '../data-dir.js';
import { watchParent } from '../parent-watch.js';

export interface RunAgentCliOptions {
  adapter?: string;
  types?: string;
  concurrency?: string;
  workDir?: string;
  bin?: string;
  cliArg: string[];
  cliEnv: string[];
  progressRegex?: string;
  nonRetryableExit: string[];
  wake?: string;
  maxTurns?: string;
  maxBudgetUsd?: string;
  maxTokens?: string;
  maxCostUsd?: string;
  /** Milliseconds (parsed by the duration option). */
  maxWallClock?: number;
  agentType?: string;
  name?: string;
  json?: boolean;
  url?: string;
  token?: string;
  dataDir?: string;
}

export async function runAgentCommand(ctx: CliContext, opts: RunAgentCliOptions): Promise<number> {
  if (opts.adapter === undefined) {
    throw new CliError(
      'rouse agent needs --adapter codex|claude|shell and --types (or: rouse agent show <id>); see rouse agent --help',
      EXIT.usage,
    );
  }
  const { AgentOptionsError, adapterNames, runAgent } = await import('@rouse/agent-host');
  const names = adapterNames(ctx.env);
  if (!names.includes(opts.adapter)) {
    throw new CliError(`--adapter must be one of ${names.join(', ')} (got "${opts.adapter}")`, EXIT.usage);
  }
  const types = (opts.types ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  if (types.length === 0)
    throw new CliError('--types needs at least one task type, e.g. --types codex', EXIT.usage);
  const concurrency = opts.concurrency === undefined ? 1 : Number(opts.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000) {
    throw new CliError('--concurrency must be an integer from 1 to 1000', EXIT.usage);
  }
  const cliEnv: Record<string, string> = {};
  for (const kv of opts.cliEnv) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new CliError(`--cli-env takes KEY=VALUE (got "${kv}")`, EXIT.usage);
    cliEnv[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  let progressRegex: RegExp | undefined;
  if (opts.progressRegex !== undefined) {
    if (opts.adapter !== 'shell') throw new CliError('--progress-regex is for --adapter shell', EXIT.usage);
    try {
      progressRegex = new RegExp(opts.progressRegex);
    } catch (err) {
      throw new CliError(
        `--progress-regex is not a regular expression: ${(err as Error).message}`,
        EXIT.usage,
      );
    }
  }
  const nonRetryableExitCodes = opts.nonRetryableExit.map((c) => {
    const n = Number(c);
    if (!Number.isInteger(n) || n < 1 || n > 255) {
      throw new CliError(`--non-retryable-exit takes an exit code from 1 to 255 (got "${c}")`, EXIT.usage);
    }
    return n;
  });
  if (nonRetryableExitCodes.length > 0 && opts.adapter !== 'shell') {
    throw new CliError('--non-retryable-exit is for --adapter shell', EXIT.usage);
  }
  const shellWake = wakeFlag(opts);
  const budget = budgetFlags(opts);
  if (Object.keys(budget).length > 0 && opts.adapter === 'shell') {
    throw new CliError(
      '--max-turns, --max-budget-usd, --max-tokens, --max-cost-usd and --max-wall-clock are for --adapter codex|claude',
      EXIT.usage,
    );
  }
  // The enrollment token: --token, ROUSE_AGENT_TOKEN, or the local coordinator's agent.token.
  const dataDir = resolveDataDir(ctx, opts.dataDir);
  const agentToken = opts.token ?? ctx.env.ROUSE_AGENT_TOKEN ?? readToken(join(dataDir, 'agent.token'));
  const conn = resolveConnection(ctx, { ...opts, ...(agentToken ? { token: agentToken } : {}) });
  ctx.reachHint = { url: conn.url, urlSource: conn.urlSource, serverPid: conn.serverPid };
  ctx.tokenHint =
    'check --token / ROUSE_AGENT_TOKEN (the enrollment token is in <data-dir>/agent.token of `rouse serve`)';
  const abs = (p: string | undefined) => (p === undefined || isAbsolute(p) ? p : resolve(ctx.deps.cwd, p));
  const interrupted = ctx.untilInterrupted();
  let stopWatching = (): void => {};
  const parentGone = new Promise<string>((res) => {
    if (ctx.env.npm_command || ctx.env.ROUSE_EXIT_WITH_PARENT === '1') {
      stopWatching = watchParent((pid) => res(`the process that started it (pid ${pid}) has exited`));
    }
  });
  const workDir = abs(opts.workDir);
  const bin = opts.bin?.includes('/') ? abs(opts.bin) : opts.bin;
  try {
    return await runAgent({
      adapter: opts.adapter,
      types,
      url: conn.url,
      token: conn.token,
      concurrency,
      ...(workDir !== undefined ? { workDir } : {}),
      ...(bin !== undefined ? { bin } : {}),
      cliArgs: opts.cliArg,
      cliEnv,
      ...(progressRegex !== undefined ? { progressRegex } : {}),
      nonRetryableExitCodes,
      ...(shellWake !== undefined ? { shellWake } : {}),
      budget,
      ...(opts.agentType !== undefined ? { agentType: opts.agentType } : {}),
      ...(opts.name !== undefined ? { name: opts.name } : {}),
      env: ctx.env as NodeJS.ProcessEnv,
      untilStopped: Promise.race([interrupted.done, parentGone]),
      onEvent: (e) => {
        if (opts.json) ctx.print(JSON.stringify({ ...e, at: ctx.now() }));
        else ctx.print(describe(e));
      },
    });
  } catch (err) {
    if (err instanceof AgentOptionsError) throw new CliError(err.message, EXIT.usage);
    throw err;
  } finally {
    stopWatching();
    interrupted.dispose();
  }
}

/** `--wake restart|none|<signal>` (shell only) as the shell adapter's wake. */
function wakeFlag(opts: RunAgentCliOptions): 'restart' | 'none' | { signal: NodeJS.Signals } | undefined {
  if (opts.wake === undefined) return undefined;
  if (opts.adapter !== 'shell') {
    throw new CliError(
      '--wake is for --adapter shell (a coding-agent CLI is interrupted and resumed)',
      EXIT.usage,
    );
  }
  const v = opts.wake.trim();
  if (v === 'restart' || v === 'none') return v;
  const name = (v.toUpperCase().startsWith('SIG') ? v.toUpperCase() : `SIG${v.toUpperCase()}`) as SignalName;
  if (!SIGNAL_NAMES.includes(name) || name === 'SIGKILL' || name === 'SIGSTOP') {
    throw new CliError(
      `--wake takes restart, none or a signal name such as SIGUSR1 (got "${opts.wake}")`,
      EXIT.usage,
    );
  }
  return { signal: name };
}

/** The budget flags as the adapter's per-type defaults (only those given). */
function budgetFlags(opts: RunAgentCliOptions): {
  maxTurns?: number;
  maxBudgetUsd?: number;
  maxTokens?: number;
  maxCostUsd?: number;
  maxWallClockMs?: number;
} {
  const whole = (flag: string, v: string | undefined): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n) || n < 1) {
      throw new CliError(`${flag} must be a positive integer (got "${v}")`, EXIT.usage);
    }
    return n;
  };
  const dollars = (flag: string, v: string | undefined): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n <= 0) {
      throw new CliError(`${flag} must be a positive number of dollars, e.g. 2.5 (got "${v}")`, EXIT.usage);
    }
    return n;
  };
  const out = {
    maxTurns: whole('--max-turns', opts.maxTurns),
    maxBudgetUsd: dollars('--max-budget-usd', opts.maxBudgetUsd),
    maxTokens: whole('--max-tokens', opts.maxTokens),
    maxCostUsd: dollars('--max-cost-usd', opts.maxCostUsd),
    maxWallClockMs: opts.maxWallClock,
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined));
}

function readToken(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

type AgentEvent = Parameters<Parameters<typeof import('@rouse/agent-host').runAgent>[0]['onEvent']>[0];

function describe(e: AgentEvent): string {
  switch (e.event) {
    case 'registered':
      return `agent ${e.agentId} (${e.adapter}) registered for ${e.types.join(', ')}; work dir ${e.workDir}`;
    case 'claimed':
      return `${e.taskId}: claimed (${e.type}, attempt ${e.attempt})`;
    case 'completed':
      return `${e.taskId}: completed`;
    case 'failed':
      return `${e.taskId}: failed (${e.code}${e.retryable ? ', retryable' : ''}): ${e.message}`;
    case 'cancelled':
      return `${e.taskId}: cancelled; its process group was stopped`;
    case 'lease_lost':
      return `${e.taskId}: lease lost (${e.code}); its process group was stopped`;
    case 'error':
      return `error (${e.op}): ${e.message}`;
    case 'stopping':
      return `stopping (${e.reason}): running tasks get the shutdown grace`;
    case 'stopped':
      return 'stopped, left the coordinator';
  }
}
