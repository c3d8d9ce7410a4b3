/** Run the real `rouse` binary as a child process and collect what it printed. */
import { type ChildProcess, spawn } from 'node:child_process';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROUSE_BIN = fileURLToPath(new URL('../../packages/server/bin/rouse.js', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment without any ROUSE_* variable of the machine running the tests, nor what npm adds
 * when it runs them (npm_* variables, node_modules/.bin on PATH): the CLI runs as from a user's shell,
 * which is what `rouse serve` looks at to say how to run rouse and whether it runs under npm.
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('ROUSE_') && !/^npm_/i.test(k) && k !== 'NO_COLOR') env[k] = v;
  if (env.PATH)
    env.PATH = env.PATH.split(delimiter)
      .filter((dir) => !dir.endsWith(join('node_modules', '.bin')))
      .join(delimiter);
  return { ...env, ...extra };
}

export function spawnCli(
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): ChildProcess {
  return spawn(process.execPath, [ROUSE_BIN, ...args], {
    cwd: options.cwd,
    env: cleanEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** A command that runs until stopped (`-f`, `--wait`), and what it has printed so far. */
export interface RunningCli {
  child: ChildProcess;
  out(): string;
  err(): string;
}

export function spawnCliRunning(
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): RunningCli {
  const child = spawnCli(args, options);
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    err += d;
  });
  return { child, out: () => out, err: () => err };
}

export function runCli(
  args: string[],
  options: { cwd: string; env?: Record<string, string>; timeoutMs?: number },
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const { child, out, err } = spawnCliRunning(args, options);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `rouse ${args.join(' ')} did not exit within ${options.timeoutMs ?? 20_000} ms\n${out()}\n${err()}`,
        ),
      );
    }, options.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: out(), stderr: err() });
    });
  });
}

/** Wait until a child exits (or kill it after `timeoutMs`). */
export function waitForExit(child: ChildProcess, timeoutMs = 10_000): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/**
 * What `rouse serve` printed up to the end of its banner; then it is stopped with SIGTERM. `onOutput`
 * sees the output so far after each chunk (to act when the server reaches a point).
 */
export async function bannerOf(
  args: string[],
  options: { cwd: string; env: Record<string, string>; onOutput?: (soFar: string) => void },
): Promise<string> {
  const child = spawnCli(args, options);
  let out = '';
  const shown = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner within 20 s:\n${out}`)), 20_000);
    const take = (d: Buffer) => {
      out += d;
      options.onOutput?.(out);
      if (out.includes('Press Ctrl-C to stop.')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stderr?.on('data', take);
    child.stdout?.on('data', take);
  });
  try {
    await shown;
    // the warning, if any, is written right after the banner, in the same turn
    await new Promise((r) => setTimeout(r, 100));
  } finally {
    child.kill('SIGTERM');
    await waitForExit(child);
  }
  return out;
}
