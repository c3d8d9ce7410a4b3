/**
 * How one run of a CLI ended, as an outcome for the task (pure): its result verdict (if it printed
 * one), how the process exited, and whether the adapter itself stopped it. A signal death the
 * adapter did not cause is never a success; a refused key or a spent budget is never retried; a CLI
 * that is gone fails the attempt as `bin_not_found` (retryable: it is this host's fault, not the task's).
 */
import type { CliErrorKind } from './cli-flavor.js';
import type { GroupExit } from './process-group.js';

/** Why the adapter stopped the run itself, if it did. */
export type StopCause =
  /** The result came but the process did not exit within the grace. */
  | 'final_grace'
  /** A wake interrupted the turn, to resume it with a nudge. */
  | 'wake';

export interface RunEnd {
  result: { ok: boolean; error?: { kind: CliErrorKind; detail: string } } | null;
  exit: GroupExit;
  stoppedBy: StopCause | null;
  /**
   * When the CLI could not be started: why its executable cannot run (gone, not executable), or
   * undefined when it is there (the start failed for another reason).
   */
  binMissing?: string;
}

export type RunVerdict =
  | { kind: 'complete' }
  /** Resume the same session (after a wake). */
  | { kind: 'resume' }
  | { kind: 'fail'; retryable: boolean; code: string; message: string };

/** 128 + n: a shell's way of saying "killed by signal n". */
const SIGNAL_CODES: Record<number, string> = { 130: 'SIGINT', 137: 'SIGKILL', 143: 'SIGTERM' };

export function describeExit(exit: GroupExit): string {
  if (exit.spawnError !== undefined) return `could not be started: ${exit.spawnError}`;
  if (exit.signal !== null) return `was killed by ${exit.signal}`;
  const sig = exit.code === null ? undefined : SIGNAL_CODES[exit.code];
  return `exited with code ${exit.code}${sig ? ` (${sig})` : ''}`;
}

/** A death by a signal (or a code that says so by convention). */
function signalDeath(exit: GroupExit): boolean {
  return exit.signal !== null || (exit.code !== null && SIGNAL_CODES[exit.code] !== undefined);
}

export function classifyRunEnd(end: RunEnd): RunVerdict {
  const { result, exit, stoppedBy } = end;
  if (stoppedBy === 'wake') {
    // the turn finished before the interrupt took: nothing to resume
    if (result?.ok && exit.code === 0) return { kind: 'complete' };
    return { kind: 'resume' };
  }
  if (result?.ok) {
    if (stoppedBy === 'final_grace') return { kind: 'complete' };
    if (signalDeath(exit)) {
      return fail(true, 'killed_by_signal', `the CLI printed its result, then ${describeExit(exit)}`);
    }
    return { kind: 'complete' };
  }
  if (result?.error) {
    const { kind, detail } = result.error;
    switch (kind) {
      case 'auth':
        return fail(false, 'cli_auth', `the model API refused the CLI's credentials: ${detail}`);
      case 'budget':
        return fail(false, 'resource_runaway', `the CLI stopped at its budget: ${detail}`);
      case 'api':
        return fail(true, 'api_error', `the model API failed: ${detail}`);
      case 'interrupted':
        return fail(true, 'interrupted', `the turn was interrupted: ${detail}`);
      default:
        return fail(true, 'turn_failed', `the turn failed: ${detail}`);
    }
  }
  if (result) return fail(true, 'turn_failed', `the turn failed (the CLI ${describeExit(exit)})`);
  if (exit.spawnError !== undefined) {
    // the agent's CLI is gone: retried (elsewhere), and `rouse agent` stops taking tasks (run-agent.ts)
    if (end.binMissing !== undefined)
      return fail(true, 'bin_not_found', `the CLI cannot be run: ${end.binMissing}`);
    return fail(true, 'cli_not_started', `the CLI ${describeExit(exit)}`);
  }
  if (signalDeath(exit))
    return fail(true, 'killed_by_signal', `the CLI ${describeExit(exit)} before its result`);
  return fail(true, 'no_result', `the CLI ${describeExit(exit)} without a result`);
}

function fail(retryable: boolean, code: string, message: string): RunVerdict {
  return { kind: 'fail', retryable, code, message };
}
