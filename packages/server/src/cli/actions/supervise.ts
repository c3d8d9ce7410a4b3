/** `rouse supervise`: the agent host's supervisor (`@rouse/agent-host`), its events printed. */
import { isAbsolute, resolve } from 'node:path';
import { type CliContext, CliError, EXIT } from '../context.js';
import { watchParent } from '../parent-watch.js';

export interface SuperviseOptions {
  config: string;
  json?: boolean;
  echo?: boolean;
}

export async function supervise(ctx: CliContext, opts: SuperviseOptions): Promise<number> {
  const { HostConfigError, runSupervisor, SupervisorNameInUseError } = await import('@rouse/agent-host');
  const configFile = isAbsolute(opts.config) ? opts.config : resolve(ctx.deps.cwd, opts.config);
  ctx.tokenHint =
    'check ROUSE_AGENT_TOKEN: rouse supervise enrolls with the enrollment token (<data-dir>/agent.token of `rouse serve`), not the admin token';
  const interrupted = ctx.untilInterrupted();
  // Under npm (a signal to npm is not passed on), or when the starter asks (`rouse demo`): stop when
  // the process that started this one is gone, instead of leaving its children running unwatched.
  let stopWatching = (): void => {};
  const parentGone = new Promise<string>((resolve) => {
    if (ctx.env.npm_command || ctx.env.ROUSE_EXIT_WITH_PARENT === '1') {
      stopWatching = watchParent((pid) => resolve(`the process that started it (pid ${pid}) has exited`));
    }
  });
  try {
    return await runSupervisor({
      configFile,
      env: ctx.env,
      untilStopped: Promise.race([interrupted.done, parentGone]),
      ...(opts.echo
        ? {
            onOutput: (key: string, line: string) => {
              if (opts.json) ctx.print(JSON.stringify({ event: 'output', key, line, at: ctx.now() }));
              else ctx.print(`[${key}] ${line}`);
            },
          }
        : {}),
      onEvent: (e) => {
        // One JSON object per line, as it happens.
        if (opts.json) ctx.print(JSON.stringify({ ...e, at: ctx.now() }));
        else ctx.print(describe(e));
      },
    });
  } catch (err) {
    if (err instanceof HostConfigError) throw new CliError(err.message, EXIT.usage);
    if (err instanceof SupervisorNameInUseError) throw new CliError(err.message, EXIT.error);
    throw err;
  } finally {
    stopWatching();
    interrupted.dispose();
  }
}

type SupervisorEvent = Parameters<
  NonNullable<Parameters<typeof import('@rouse/agent-host').runSupervisor>[0]['onEvent']>
>[0];

function describe(e: SupervisorEvent): string {
  switch (e.event) {
    case 'registered':
      return `supervisor ${e.name} registered as ${e.agentId} (incarnation ${e.incarnation}), heartbeat every ${e.heartbeatIntervalMs}ms`;
    case 'started':
      return `${e.key}: started, pid ${e.pid}`;
    case 'exited':
      return `${e.key}: pid ${e.pid} ${e.signal !== null ? `killed by ${e.signal}` : `exited with code ${e.code}`}${e.expected ? ' (stopped)' : ''}`;
    case 'restart_scheduled':
      return `${e.key}: restarting in ${e.delayMs}ms (${e.restartsInWindow} restarts in the window)`;
    case 'fatal':
      return `${e.key}: fatal — its restart budget is spent after ${e.restarts} restarts; not restarting`;
    case 'spawn_failed':
      return `${e.key}: could not start: ${e.message}`;
    case 'command':
      return `command ${e.type} (${e.id}) for ${e.key ?? 'nobody here'}`;
    case 'acknowledged':
      return `acknowledged ${e.id}: ${e.outcome}${e.message ? ` — ${e.message}` : ''}`;
    case 'heartbeat_failed':
      return `heartbeat failed: ${e.message}`;
    case 'child_registration_failed':
      return `${e.key}: could not register its agent: ${e.message}`;
    case 'stopping':
      return `stopping every child (${e.reason})`;
    case 'left':
      return 'stopped, left the coordinator';
  }
}
