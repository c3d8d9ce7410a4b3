/**
 * What every `rouse` subcommand receives: where to write, the environment, the clock and a way to wait
 * for Ctrl-C. Injected so that tests can run the CLI in-process and capture its output.
 */

/** Exit codes scripts can rely on (documented in `rouse --help` and the README). */
export const EXIT = {
  /** Success. */
  ok: 0,
  /** The coordinator answered with an error, or (`submit --wait`) the task did not complete. */
  error: 1,
  /** Usage error: unknown command or flag, bad option value (or --url / ROUSE_URL). */
  usage: 2,
  /** The coordinator cannot be reached (not running, wrong URL, nothing in the data directory). */
  unreachable: 3,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** Output sinks. `out` and `err` write text verbatim (callers add the newline). */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Is stdout a terminal? (pretty logs, colours) */
  isTTY: boolean;
  /** Is stderr a terminal? (progress lines) */
  errTTY?: boolean;
  /** Use ANSI colours on stdout. */
  color: boolean;
}

export interface CliDeps {
  io: CliIo;
  env: Record<string, string | undefined>;
  cwd: string;
  /** The script node runs (`process.argv[1]`), to tell the user how to run rouse again. */
  script?: string;
  now(): number;
  /**
   * Call `handler` on SIGINT/SIGTERM; returns the function that removes it. The default listens on
   * the process; tests may trigger it themselves.
   */
  onInterrupt(handler: (signal: string) => void): () => void;
}

/** An error the CLI reports as `error: <message>` with a chosen exit code. */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  constructor(message: string, exitCode: ExitCode = EXIT.error) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/** Where a client command expected the coordinator, to make "cannot reach" errors actionable. */
export interface ReachHint {
  url: string;
  urlSource: string;
  serverPid: number | null;
}

/** The context handed to each subcommand: deps plus the exit code the action chose. */
export class CliContext {
  exitCode: ExitCode | number = EXIT.ok;
  /** Set by client commands once they know which coordinator they talk to. */
  reachHint: ReachHint | undefined;
  /**
   * What to check when the coordinator refuses the token, set by commands whose token is not the admin
   * token (`rouse agent`, `rouse supervise`: the enrollment token). @default the admin token's hint
   */
  tokenHint: string | undefined;
  readonly version: string;
  constructor(
    readonly deps: CliDeps,
    version: string,
  ) {
    this.version = version;
  }
  get io(): CliIo {
    return this.deps.io;
  }
  get env(): Record<string, string | undefined> {
    return this.deps.env;
  }
  now(): number {
    return this.deps.now();
  }
  /** Write one line to stdout. */
  print(line = ''): void {
    this.deps.io.out(`${line}\n`);
  }
  /** Write one line to stderr. */
  warn(line: string): void {
    this.deps.io.err(`${line}\n`);
  }
  /** Print a value as stable, pretty JSON (the `--json` output). */
  printJson(value: unknown): void {
    this.deps.io.out(`${JSON.stringify(value, null, 2)}\n`);
  }
  /** Resolves on the first SIGINT/SIGTERM or when `signal` aborts; returns a cleanup function. */
  untilInterrupted(signal?: AbortSignal): { done: Promise<string>; dispose(): void } {
    let dispose = (): void => {};
    const done = new Promise<string>((resolve) => {
      const off = this.deps.onInterrupt((sig) => resolve(sig));
      const onAbort = () => resolve('abort');
      signal?.addEventListener('abort', onAbort, { once: true });
      dispose = () => {
        off();
        signal?.removeEventListener('abort', onAbort);
      };
    });
    return { done, dispose };
  }
}
