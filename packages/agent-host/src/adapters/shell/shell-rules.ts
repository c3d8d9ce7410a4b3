/**
 * The shell adapter's rules (pure): its payload checked and turned into argv / env / stdin, progress
 * read from output lines, and how an exit becomes the task's outcome.
 *
 * Payload: `{command: [file, ...args] | "a /bin/sh script", args?: [...], env?: {K: V}, stdin?: "...",
 * cwd?: "/abs", resultFile?: "name.json"}`. With `--bin`, the command is that executable (with the
 * `--cli-arg` values, then the payload's `args`) and the payload needs no `command`.
 */

export interface ShellPayload {
  argv: string[];
  /**
   * The program (`argv[0]`) is the payload's own choice (a `command` array); false when it is the
   * agent's (`--bin`, or `/bin/sh` for a script string). A program that cannot be found is then the
   * task's mistake, not the agent's.
   */
  programFromPayload: boolean;
  env: Record<string, string>;
  stdin: string | undefined;
  cwd: string | null;
  resultFile: string | null;
}

export class ShellPayloadError extends Error {}

const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

export function parseShellPayload(
  payload: unknown,
  fixed: { bin?: string | undefined; args?: readonly string[] } = {},
): ShellPayload {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new ShellPayloadError('payload must be an object {"command": [...] | "..."}');
  }
  const p = payload as Record<string, unknown>;
  if (p.args !== undefined && !strings(p.args))
    throw new ShellPayloadError('payload.args must be an array of strings');
  const extra = (p.args as string[] | undefined) ?? [];
  let argv: string[];
  let programFromPayload = false;
  if (fixed.bin !== undefined) {
    argv = [fixed.bin, ...(fixed.args ?? []), ...extra];
  } else if (typeof p.command === 'string' && p.command.trim() !== '') {
    argv = ['/bin/sh', '-c', p.command, 'sh', ...extra];
  } else if (strings(p.command) && p.command.length > 0 && p.command[0] !== '') {
    argv = [...p.command, ...extra];
    programFromPayload = true;
  } else {
    throw new ShellPayloadError('payload.command must be a non-empty array of strings or a non-empty string');
  }
  if (
    p.env !== undefined &&
    (typeof p.env !== 'object' ||
      p.env === null ||
      Array.isArray(p.env) ||
      !Object.values(p.env).every((v) => typeof v === 'string'))
  ) {
    throw new ShellPayloadError('payload.env must be an object of strings');
  }
  if (p.stdin !== undefined && typeof p.stdin !== 'string')
    throw new ShellPayloadError('payload.stdin must be a string');
  if (p.cwd !== undefined && (typeof p.cwd !== 'string' || !p.cwd.startsWith('/'))) {
    throw new ShellPayloadError('payload.cwd must be an absolute path');
  }
  if (p.resultFile !== undefined && (typeof p.resultFile !== 'string' || p.resultFile === '')) {
    throw new ShellPayloadError(
      'payload.resultFile must be a file name (relative to the working directory) or an absolute path',
    );
  }
  return {
    argv,
    programFromPayload,
    env: (p.env as Record<string, string> | undefined) ?? {},
    stdin: p.stdin as string | undefined,
    cwd: (p.cwd as string | undefined) ?? null,
    resultFile: (p.resultFile as string | undefined) ?? null,
  };
}

/** `::progress 0.4 running tests` (a fraction in [0, 1] or a percentage `40%`, then an optional phase). */
const PROGRESS_LINE = /^::progress\s+(\d+(?:\.\d+)?)(%?)(?:\s+(.*))?$/;

/**
 * The progress a line reports, or null. `regex` (the `--progress-regex`) is tried after the line
 * protocol: two groups are `done / total`, one group a fraction (or a percentage when above 1); the
 * match is the phase.
 */
export function progressFromLine(
  line: string,
  regex: RegExp | null,
): { value: number; phase?: string } | null {
  const m = PROGRESS_LINE.exec(line.trim());
  if (m !== null) {
    const raw = Number(m[1]);
    const value = clamp(m[2] === '%' ? raw / 100 : raw);
    const phase = m[3]?.trim().slice(0, 256);
    return phase ? { value, phase } : { value };
  }
  if (regex === null) return null;
  const r = regex.exec(line);
  if (r === null) return null;
  const [, a, b] = r;
  let value: number | null = null;
  if (a !== undefined && b !== undefined && Number(b) > 0) value = clamp(Number(a) / Number(b));
  else if (a !== undefined && Number.isFinite(Number(a)))
    value = clamp(Number(a) > 1 ? Number(a) / 100 : Number(a));
  if (value === null) return null;
  return { value, phase: r[0].slice(0, 256) };
}

/** True for a line of the progress protocol (kept out of the "last stdout line" result). */
export function isProgressLine(line: string): boolean {
  return PROGRESS_LINE.test(line.trim());
}

function clamp(v: number): number {
  return Math.min(1, Math.max(0, v));
}

export type ShellVerdict =
  | { kind: 'complete' }
  | { kind: 'fail'; retryable: boolean; code: string; message: string };

/**
 * Why the program of a command that could not be started cannot run (executable.ts), and whose choice
 * it was: the payload's (`task`) or the agent's (`agent`: `--bin`, `/bin/sh`).
 */
export interface MissingProgram {
  why: string;
  whose: 'task' | 'agent';
}

/**
 * Exit 0 completes; a signal or another code fails — retryable unless the code is listed as final. A
 * command that could not be started fails for good when the payload named a program that cannot run
 * (`command_not_found`: no retry would find it), and as `bin_not_found` (retryable) when the agent's
 * program (`--bin`, `/bin/sh`) cannot; other failures to start are retried (`not_started`).
 */
export function classifyShellExit(
  exit: { code: number | null; signal: string | null; spawnError?: string },
  nonRetryableExitCodes: readonly number[],
  missing: MissingProgram | null = null,
): ShellVerdict {
  if (exit.spawnError !== undefined) {
    if (missing !== null) {
      // the payload's program: no retry would find it; the agent's (--bin): this host's fault, retried
      // elsewhere, and `rouse agent` stops taking tasks (run-agent.ts)
      return {
        kind: 'fail',
        retryable: missing.whose === 'agent',
        code: missing.whose === 'task' ? 'command_not_found' : 'bin_not_found',
        message: `the command cannot be run: ${missing.why}`,
      };
    }
    return {
      kind: 'fail',
      retryable: true,
      code: 'not_started',
      message: `the command could not be started: ${exit.spawnError}`,
    };
  }
  if (exit.signal !== null) {
    return {
      kind: 'fail',
      retryable: true,
      code: 'killed_by_signal',
      message: `the command was killed by ${exit.signal}`,
    };
  }
  if (exit.code === 0) return { kind: 'complete' };
  const final = exit.code !== null && nonRetryableExitCodes.includes(exit.code);
  return {
    kind: 'fail',
    retryable: !final,
    code: 'exit_code',
    message: `the command exited with code ${exit.code}`,
  };
}
