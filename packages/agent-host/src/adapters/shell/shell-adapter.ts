/**
 * The shell adapter: any command as a task worker (`rouse agent --adapter shell`). Per attempt the
 * payload becomes argv / env / stdin (shell-rules.ts); the command runs in a process group of its
 * own in the payload's `cwd` or `<dataDir>/work/<taskId>`; every output line goes to the task's log;
 * `::progress 0.4 running tests` lines (or `progressRegex` matches) become progress. Exit 0 completes
 * with `{exitCode: 0, output: <the last stdout line>}` — or, with the payload's `resultFile`, that
 * file's JSON; another exit fails (retryable unless its code is in `nonRetryableExitCodes`); a signal
 * is never success; a `command` array whose program cannot run (not there, not executable) fails for
 * good (`command_not_found`). `timing.executionTimeoutMs` stops the group (grandchildren included) a
 * margin before the SDK's own timer and fails the attempt; a cancel, a lost lease or a shutdown stops
 * it at once (SIGTERM, `cancelGraceMs`, SIGKILL).
 *
 * A `wake` for the task (or the agent) does what `wake` says ({@link ShellWake}): by default
 * `restart` — SIGINT to the command's group (a Ctrl-C), `stopGraceMs`, SIGKILL, then the same command
 * again in the same attempt and directory, at most `maxWakeRestarts` times (a later wake stops it and
 * fails the attempt, retryable), the phase then saying `restarted N×` (the stall the wake answered
 * closes, as a CLI's `resumed N×` closes its); a signal name — that signal to the group, and the command handles it
 * (an exit it causes is judged like any other exit); `none` — nothing but a note in the log.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type { Json, Task } from '@rouse/protocol';
import { NonRetryableError, type TaskContext, type TaskHandler } from '@rouse/sdk';
import { phaseAfterWakes } from '../cli-progress.js';
import { timeoutMargin } from '../cli-task.js';
import { findExecutable } from '../executable.js';
import { type GroupRegistry, sharedGroupGuard } from '../group-guard.js';
import { outsideNote, ProcessGroup } from '../process-group.js';
import {
  classifyShellExit,
  isProgressLine,
  type MissingProgram,
  parseShellPayload,
  progressFromLine,
  ShellPayloadError,
} from './shell-rules.js';

export interface ShellAdapterOptions {
  /** `work/<taskId>` lives under it. */
  dataDir: string;
  /** A fixed executable (then the payload gives only `args`). @default the payload's command */
  bin?: string;
  /** With `bin`: its first arguments (`--cli-arg`). @default [] */
  extraArgs?: string[];
  /** Added to every command's environment (`--cli-env`), under the payload's own `env`. @default {} */
  extraEnv?: Record<string, string>;
  /** The environment commands start from (its `ROUSE_*` variables are left out). @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Progress from lines this matches (after the `::progress` protocol). @default none */
  progressRegex?: RegExp;
  /** Exit codes that fail the task for good. @default [] */
  nonRetryableExitCodes?: number[];
  /** Stopping at the execution timeout: SIGTERM, at most this long, SIGKILL. @default 2000 */
  stopGraceMs?: number;
  /** On a cancel, a lost lease or a shutdown: the grace before SIGKILL. @default 500 */
  cancelGraceMs?: number;
  /** What a wake does. @default 'restart' */
  wake?: ShellWake;
  /** Restarts by wakes per attempt; a later wake fails the attempt (retryable). @default 3 */
  maxWakeRestarts?: number;
  /**
   * Where the command's process group is listed so that it dies with this process, even a SIGKILLed
   * one (group-guard.ts); null: nowhere. @default the process's shared guard
   */
  groupGuard?: GroupRegistry | null;
}

/**
 * What a `wake` does to a running command: `restart` it (SIGINT to its group, a grace, SIGKILL, then
 * the same command again in the same attempt), send it a signal (to its group), or nothing (`none`).
 */
export type ShellWake = 'restart' | 'none' | { signal: NodeJS.Signals };

const MAX_LOG_LINE = 16 * 1024;
const MAX_RESULT_LINE = 16 * 1024;

export function shellTaskHandler(options: ShellAdapterOptions): TaskHandler {
  const baseEnv = Object.fromEntries(
    Object.entries(options.env ?? process.env).filter(([k]) => !k.startsWith('ROUSE_')),
  );
  const stopGraceMs = options.stopGraceMs ?? 2000;
  const cancelGraceMs = options.cancelGraceMs ?? 500;
  const guard = options.groupGuard === undefined ? sharedGroupGuard() : options.groupGuard;
  return async (task: Task, ctx: TaskContext): Promise<Json> => {
    let payload: ReturnType<typeof parseShellPayload>;
    try {
      payload = parseShellPayload(task.payload, { bin: options.bin, args: options.extraArgs ?? [] });
    } catch (err) {
      if (err instanceof ShellPayloadError) throw new NonRetryableError(err.message, { code: 'bad_payload' });
      throw err;
    }
    const cwd = payload.cwd ?? join(options.dataDir, 'work', task.id);
    await mkdir(cwd, { recursive: true });
    const wake = options.wake ?? 'restart';
    const maxWakeRestarts = options.maxWakeRestarts ?? 3;
    const note = (text: string) => ctx.log(text, 'adapter');
    let lastLine: string | null = null;
    // the command's last progress; after a wake's restart its phase says `restarted N×`, as a CLI's
    // says `resumed N×` (cli-progress.ts), so the restart moves the progress and the stall closes
    let progress: { value: number; phase: string } = { value: 0, phase: '' };
    let restarts = 0;
    const report = () => {
      const phase = phaseAfterWakes(progress.phase, 'restarted', restarts);
      if (phase === '') ctx.progress(progress.value);
      else ctx.progress(progress.value, phase);
    };
    const [file, ...args] = payload.argv as [string, ...string[]];
    const env = { ...baseEnv, ...options.extraEnv, ...payload.env };
    const start = () =>
      ProcessGroup.spawn({
        file,
        args,
        cwd,
        env,
        guard,
        onOutside: (procs, signal) => note(outsideNote(procs, signal, 'command')),
        ...(payload.stdin !== undefined ? { stdin: payload.stdin } : {}),
        onStdout: (line) => {
          ctx.log(line.slice(0, MAX_LOG_LINE), 'stdout');
          const p = progressFromLine(line, options.progressRegex ?? null);
          if (p !== null) {
            progress = { value: p.value, phase: p.phase ?? progress.phase }; // no phase: it stays
            report();
          }
          if (!isProgressLine(line) && line.trim() !== '') lastLine = line.slice(0, MAX_RESULT_LINE);
        },
        onStderr: (line) => ctx.log(line.slice(0, MAX_LOG_LINE), 'stderr'),
      });
    let group = start();
    let timedOut = false;
    const exec = task.timing.executionTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    if (exec !== null && exec > 0) {
      const margin = timeoutMargin(exec);
      timer = setTimeout(() => {
        timedOut = true;
        ctx.log(`execution timeout (${exec} ms) is near: stopping the command`, 'adapter');
        void group.stop({ graceMs: Math.min(stopGraceMs, margin / 2) });
      }, exec - margin);
      timer.unref();
    }
    const onAbort = () => void group.stop({ graceMs: cancelGraceMs });
    ctx.signal.addEventListener('abort', onAbort);
    if (ctx.signal.aborted) onAbort();
    // a wake: restart the command, signal its group, or nothing (ShellWake)
    let restarting = false;
    let wakes = 0;
    const offWake = ctx.onWake((reason) => {
      const why = reason ? ` (${reason})` : '';
      if (!group.running || restarting) return;
      if (wake === 'none') {
        note(`wake${why}: ignored (--wake none)`);
        return;
      }
      if (typeof wake === 'object') {
        note(`wake${why}: sending ${wake.signal} to the command's process group`);
        group.signal(wake.signal);
        return;
      }
      wakes++;
      restarting = true;
      note(
        wakes > maxWakeRestarts
          ? `wake${why}: woken ${wakes} times, the adapter restarts at most ${maxWakeRestarts}: stopping the command`
          : `wake${why}: interrupting the command (SIGINT to its group) to restart it (${wakes} of ${maxWakeRestarts})`,
      );
      void group.stop({ signal: 'SIGINT', graceMs: stopGraceMs });
    });
    try {
      for (;;) {
        const exit = await group.exited;
        await group.stop({ graceMs: 0 }); // what it left in its group goes with it
        if (ctx.signal.aborted) throw ctx.signal.reason;
        if (timedOut) {
          throw Object.assign(
            new Error(`the command was stopped before the execution timeout of ${exec} ms`),
            { code: 'execution_timeout' },
          );
        }
        if (restarting) {
          restarting = false;
          if (wakes > maxWakeRestarts) {
            throw Object.assign(
              new Error(`woken ${wakes} times; the adapter restarts a command at most ${maxWakeRestarts}`),
              { code: 'interrupted' },
            );
          }
          lastLine = null;
          note(`restarting the command after a wake (${wakes} of ${maxWakeRestarts})`);
          restarts++;
          report();
          group = start();
          continue;
        }
        // a command that could not be started: is its program not there (or not executable)?
        let missing: MissingProgram | null = null;
        if (exit.spawnError !== undefined) {
          const lookup = findExecutable(file, env, cwd);
          if (!lookup.found)
            missing = { why: lookup.why, whose: payload.programFromPayload ? 'task' : 'agent' };
        }
        const verdict = classifyShellExit(exit, options.nonRetryableExitCodes ?? [], missing);
        if (verdict.kind === 'fail') {
          if (!verdict.retryable) throw new NonRetryableError(verdict.message, { code: verdict.code });
          throw Object.assign(new Error(verdict.message), { code: verdict.code });
        }
        if (payload.resultFile !== null) return await readResultFile(cwd, payload.resultFile);
        return { exitCode: 0, output: lastLine };
      }
    } finally {
      clearTimeout(timer);
      offWake();
      ctx.signal.removeEventListener('abort', onAbort);
      if (group.running) await group.stop({ graceMs: cancelGraceMs });
    }
  };
}

async function readResultFile(cwd: string, name: string): Promise<Json> {
  const path = isAbsolute(name) ? name : join(cwd, name);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new NonRetryableError(`the result file ${path} cannot be read: ${(err as Error).message}`, {
      code: 'result_file',
    });
  }
  try {
    return JSON.parse(text) as Json;
  } catch {
    throw new NonRetryableError(`the result file ${path} is not JSON`, { code: 'result_file' });
  }
}
