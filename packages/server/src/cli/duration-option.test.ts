import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { CliError, EXIT } from './context.js';
import { durationOption, durationRangeOption } from './duration-option.js';

/** A program with the flags under test; parse errors throw (exitOverride) instead of exiting. */
function program(): Command {
  return new Command('t')
    .exitOverride()
    .configureOutput({ writeErr: () => {}, writeOut: () => {} })
    .addOption(durationOption('--interval <duration>', 'an interval', { min: 100, defaultMs: 30_000 }))
    .addOption(durationOption('--wait <duration>', 'a wait', { min: 0 }))
    .addOption(durationOption('--ttl <duration>', 'a ttl'))
    .addOption(durationRangeOption('--expected <min..max>', 'a range'));
}

const parse = (...args: string[]) => program().parse(args, { from: 'user' }).opts();

function usageError(args: string[]): CliError {
  try {
    parse(...args);
  } catch (err) {
    if (err instanceof CliError) return err;
    throw err;
  }
  throw new Error(`${args.join(' ')} was accepted`);
}

describe('duration flags', () => {
  it('read a number and its unit into milliseconds; the default is shown as a duration', () => {
    expect(parse('--interval', '1.5s', '--wait', '0', '--ttl', '2m', '--expected', '5s..5m')).toEqual({
      interval: 1500,
      wait: 0,
      ttl: 120_000,
      expected: { min: 5000, max: 300_000 },
    });
    expect(parse().interval).toBe(30_000);
    expect(program().helpInformation()).toContain('(default: 30s)');
  });

  it('refuse a bare number as a usage error naming the flag and showing the fix', () => {
    const err = usageError(['--interval', '5']);
    expect(err.exitCode).toBe(EXIT.usage);
    expect(err.message).toBe('--interval: "5" has no unit; write 5s (or 5000ms)');
    expect(usageError(['--expected', '5..5m']).message).toBe(
      '--expected: "5" has no unit; write 5s (or 5000ms)',
    );
  });

  it('refuse values below the least, and 0 unless allowed', () => {
    expect(usageError(['--interval', '50ms']).message).toBe(
      '--interval: must be at least 100ms (got "50ms")',
    );
    expect(parse('--interval', '100ms').interval).toBe(100);
    expect(usageError(['--ttl', '0']).message).toBe('--ttl: must be greater than 0 (got "0")');
    expect(usageError(['--ttl', '0s']).exitCode).toBe(EXIT.usage);
  });
});
