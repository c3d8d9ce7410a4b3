/** A `rouse supervise` child process for the workloads that need one: started, watched, stopped. */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROUSE_BIN = fileURLToPath(new URL('../bin/rouse.js', import.meta.resolve('@rouse/server')));

export interface SuperviseProcess {
  readonly child: ChildProcess;
  /** The last 4 KB it wrote on stderr (for error messages). */
  stderr(): string;
  /** SIGTERM (it stops its children, then leaves), SIGKILL after 15 s; resolves when it exited. */
  stop(): Promise<void>;
}

export function startSupervise(
  coord: { url: string; agentToken: string },
  configPath: string,
): SuperviseProcess {
  const child = spawn(process.execPath, [ROUSE_BIN, 'supervise', '-c', configPath, '--json'], {
    env: { ...process.env, ROUSE_URL: coord.url, ROUSE_AGENT_TOKEN: coord.agentToken },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-4000);
  });
  return {
    child,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
