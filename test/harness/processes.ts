/**
 * Child processes for end-to-end tests. Every child is registered; `assertNoLeakedProcesses()` (run
 * after each test by `setup.ts`) kills leftovers and fails the test that leaked them.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const live = new Set<ChildProcess>();

export interface Spawned {
  proc: ChildProcess;
  /** Lines printed on stdout so far. */
  lines: string[];
  /** Lines printed on stderr so far. */
  errLines: string[];
  /** Resolves with the first stdout line (parsed as JSON when possible) matching `pred`. */
  waitForLine<T = unknown>(pred: (msg: T) => boolean, timeoutMs?: number): Promise<T>;
  /** Resolves with the exit code (or signal) when the process ends. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): void;
}

export function spawnNode(args: string[], env: Record<string, string> = {}): Spawned {
  const proc = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(proc);
  const lines: string[] = [];
  const errLines: string[] = [];
  const waiters = new Set<{ pred: (msg: unknown) => boolean; resolve: (msg: unknown) => void }>();
  const parse = (line: string): unknown => {
    try {
      return JSON.parse(line);
    } catch {
      return line;
    }
  };
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    lines.push(line);
    const msg = parse(line);
    for (const w of waiters) {
      if (w.pred(msg)) {
        waiters.delete(w);
        w.resolve(msg);
      }
    }
  });
  createInterface({ input: proc.stderr! }).on('line', (line) => errLines.push(line));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.once('exit', (code, signal) => {
      live.delete(proc);
      resolve({ code, signal });
    });
  });
  return {
    proc,
    lines,
    errLines,
    exited,
    kill: (signal = 'SIGTERM') => {
      proc.kill(signal);
    },
    waitForLine<T>(pred: (msg: T) => boolean, timeoutMs = 20_000): Promise<T> {
      for (const line of lines) {
        const msg = parse(line) as T;
        if (pred(msg)) return Promise.resolve(msg);
      }
      return new Promise<T>((resolve, reject) => {
        const w = { pred: pred as (m: unknown) => boolean, resolve: resolve as (m: unknown) => void };
        waiters.add(w);
        const timer = setTimeout(() => {
          waiters.delete(w);
          reject(
            new Error(
              `no matching line within ${timeoutMs} ms; stdout tail:\n${lines.slice(-10).join('\n')}\nstderr tail:\n${errLines.slice(-10).join('\n')}`,
            ),
          );
        }, timeoutMs);
        exited.then(() => {
          // Give the line reader a moment to drain before declaring failure.
          setTimeout(() => {
            if (waiters.has(w)) {
              waiters.delete(w);
              clearTimeout(timer);
              reject(
                new Error(
                  `process exited before a matching line; stderr:\n${errLines.slice(-20).join('\n')}`,
                ),
              );
            }
          }, 200);
        });
        const origResolve = w.resolve;
        w.resolve = (m) => {
          clearTimeout(timer);
          origResolve(m);
        };
      });
    },
  };
}

/** Kill every child still alive; returns how many were left running. */
export async function killAll(): Promise<number> {
  const left = [...live];
  for (const p of left) p.kill('SIGKILL');
  await Promise.all(
    left.map((p) => new Promise((r) => (p.exitCode !== null || p.signalCode ? r(null) : p.once('exit', r)))),
  );
  return left.length;
}

export async function assertNoLeakedProcesses(): Promise<void> {
  const leaked = await killAll();
  if (leaked > 0) throw new Error(`test leaked ${leaked} child process(es); stop what you start`);
}

/** True while `pid` is a live process (not gone, not a zombie waiting to be reaped). Linux /proc. */
export { alive } from '../../packages/agent-host/src/test-support/processes.js';
