/**
 * Parent side of the bench's child processes (the SDK worker process, the detection agent): spawn a
 * compiled entry point with a JSON config, read the JSON lines it prints on stdout, send it line
 * commands on stdin, and kill it.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** A JSON line printed by a child; every message has a `type`. */
export interface ChildMessage {
  type: string;
  [key: string]: unknown;
}

export interface JsonChild {
  readonly pid: number;
  /** Every message so far, in order. */
  readonly messages: readonly ChildMessage[];
  /** Resolves with the first message (already received or future) matching `predicate`. */
  waitFor(predicate: (m: ChildMessage) => boolean, timeoutMs?: number): Promise<ChildMessage>;
  /** Called for each message as it arrives. */
  onMessage(listener: (m: ChildMessage) => void): void;
  /** Write one command line to the child's stdin. */
  send(command: string): void;
  kill(signal: NodeJS.Signals): void;
  /** Resolves with the exit code or signal. */
  readonly exited: Promise<number | NodeJS.Signals | null>;
  /** The last few kB of stderr (for error messages). */
  stderr(): string;
}

/** Ask a child to stop (`stop` on stdin); SIGKILL it if it has not exited after `graceMs`. */
export async function stopJsonChild(child: JsonChild, graceMs = 5000): Promise<void> {
  child.send('stop');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await child.exited;
  clearTimeout(timer);
}

/** Spawn `packages/bench/dist/<entry>.js` with `config` as its one JSON argument. */
export function spawnJsonChild(entry: string, config: unknown): JsonChild {
  const script = fileURLToPath(new URL(`./${entry}.js`, import.meta.url));
  const child = spawn(process.execPath, [script, JSON.stringify(config)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const messages: ChildMessage[] = [];
  const listeners: ((m: ChildMessage) => void)[] = [];
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (s: string) => {
    stderr = (stderr + s).slice(-8000);
  });
  child.stdin.on('error', () => {});
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal)),
  );
  createInterface({ input: child.stdout }).on('line', (line) => {
    let m: ChildMessage;
    try {
      m = JSON.parse(line) as ChildMessage;
    } catch {
      return; // a stray log line
    }
    messages.push(m);
    for (const l of listeners) l(m);
  });

  return {
    pid: child.pid!,
    messages,
    exited,
    stderr: () => stderr,
    onMessage(listener) {
      listeners.push(listener);
    },
    send(command) {
      if (child.stdin.writable) child.stdin.write(`${command}\n`);
    },
    kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    waitFor(predicate, timeoutMs = 30_000) {
      const found = messages.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(new Error(`${entry}: no expected message within ${timeoutMs} ms; stderr:\n${stderr}`));
        }, timeoutMs);
        listeners.push((m) => {
          if (predicate(m)) {
            clearTimeout(timer);
            resolve(m);
          }
        });
        exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`${entry} exited (${code}) before the expected message; stderr:\n${stderr}`));
        });
      });
    },
  };
}
