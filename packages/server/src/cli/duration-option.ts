/**
 * Duration flags: every flag that takes a duration is declared here, so each one reads its value the same
 * way (a number and its unit, `parseDuration`), refuses a bare number and a value below its least with
 * a usage error (exit 2) that names the flag and shows the fix, and shows its default as a duration.
 */
import { Option } from 'commander';
import { CliError, EXIT } from './context.js';
import { formatDuration } from './format/time.js';
import { parseDuration, parseDurationRange } from './parse.js';

export interface DurationRule {
  /** The least value in milliseconds. @default 1 (0 is refused) */
  min?: number;
  /** The default in milliseconds, shown in the help as a duration. */
  defaultMs?: number;
}

/** A flag whose value is a duration, e.g. `durationOption('--heartbeat-interval <duration>', '…', { min: 100 })`. */
export function durationOption(flags: string, description: string, rule: DurationRule = {}): Option {
  const option = new Option(flags, description);
  const min = rule.min ?? 1;
  option.argParser((value: string) => {
    const ms = readAs(option, () => parseDuration(value));
    if (ms < min) throw usage(option, tooSmall(value, min));
    return ms;
  });
  if (rule.defaultMs !== undefined) option.default(rule.defaultMs, formatDuration(rule.defaultMs));
  return option;
}

/** A flag whose value is a range of durations, `min..max` (e.g. `5s..5m`). */
export function durationRangeOption(flags: string, description: string): Option {
  const option = new Option(flags, description);
  return option.argParser((value: string) => readAs(option, () => parseDurationRange(value)));
}

function tooSmall(value: string, min: number): string {
  return min === 1
    ? `must be greater than 0 (got "${value}")`
    : `must be at least ${formatDuration(min)} (got "${value}")`;
}

function readAs<T>(option: Option, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw usage(option, (err as Error).message);
  }
}

/** Thrown from a parser, it ends the command line's parsing and is reported as `error: --flag: message`. */
function usage(option: Option, message: string): CliError {
  return new CliError(`${option.long ?? option.flags}: ${message}`, EXIT.usage);
}
