/**
 * Running a supervisor as a program (`rouse supervise`): read and check the config file, start, stop
 * everything on SIGTERM or SIGINT, and resolve with the exit code.
 */
import { readFileSync } from 'node:fs';
import { HostConfigError, parseHostConfig } from './host-config.js';
import { Supervisor, type SupervisorEvent } from './supervisor.js';

export interface RunSupervisorOptions {
  configFile: string;
  onEvent: (event: SupervisorEvent) => void;
  /** Each complete line a child writes, to echo it. @default none */
  onOutput?: (key: string, line: string) => void;
  env?: NodeJS.ProcessEnv;
  /**
   * Resolves (with what stopped it, a signal's name say) when the supervisor should stop its children
   * and leave. @default the first SIGTERM or SIGINT
   */
  untilStopped?: Promise<string>;
}

/**
 * Start, run until a stop signal, stop all children and leave; resolves 0. A config that cannot be read
 * or is bad throws {@link HostConfigError}; a refused name throws too.
 */
export async function runSupervisor(options: RunSupervisorOptions): Promise<number> {
  let text: string;
  try {
    text = readFileSync(options.configFile, 'utf8');
  } catch (err) {
    // a config that is not there is a bad config like any other (the CLI: exit 2)
    throw new HostConfigError(options.configFile, [
      { path: '', message: `cannot read it: ${(err as Error).message}` },
    ]);
  }
  const config = parseHostConfig(text, options.configFile, options.env);
  const supervisor = new Supervisor({
    config,
    onEvent: options.onEvent,
    ...(options.onOutput !== undefined ? { onOutput: options.onOutput } : {}),
  });
  const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];
  let onSignal: (sig: NodeJS.Signals) => void = () => undefined;
  const stopped =
    options.untilStopped ??
    new Promise<string>((resolve) => {
      onSignal = resolve;
      for (const sig of signals) process.once(sig, onSignal);
    });
  try {
    await supervisor.start();
    const why = await stopped;
    await supervisor.stop(`received ${why}`);
    return 0;
  } catch (err) {
    await supervisor.stop('failed to start').catch(() => undefined);
    throw err;
  } finally {
    for (const sig of signals) process.removeListener(sig, onSignal);
  }
}
