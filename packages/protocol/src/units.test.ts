import { describe, expect, it } from 'vitest';
import { formatDuration, formatSize, parseDuration, parseSize } from './units.js';

const ok = (value: number) => ({ ok: true, value });

describe('parseDuration', () => {
  it('takes numbers as seconds and strings with ms, s, m, h, d (decimals allowed)', () => {
    const cases: [unknown, number][] = [
      [30, 30_000],
      [0, 0],
      [0.5, 500],
      [1.2345, 1235],
      ['30', 30_000],
      ['500ms', 500],
      ['30s', 30_000],
      ['1.5s', 1500],
      ['5m', 300_000],
      ['1h', 3_600_000],
      ['.5h', 1_800_000],
      ['1d', 86_400_000],
      [' 10 s ', 10_000],
      ['2.m', 120_000],
    ];
    for (const [input, ms] of cases) expect(parseDuration(input), JSON.stringify(input)).toEqual(ok(ms));
  });

  it('refuses anything else with the expected form, and a hint for a near miss', () => {
    expect(parseDuration('5 minutes')).toEqual({
      ok: false,
      message:
        'expected a duration such as 30 (seconds) or "30s", "500ms", "5m", "1h", "1d"; got "5 minutes" (did you mean "5m"?)',
    });
    expect(parseDuration('2 hours')).toMatchObject({ message: expect.stringMatching(/did you mean "2h"\?/) });
    expect(parseDuration('10S')).toMatchObject({ message: expect.stringMatching(/did you mean "10s"\?/) });
    expect(parseDuration('250 msec')).toMatchObject({
      message: expect.stringMatching(/did you mean "250ms"\?/),
    });
    for (const bad of [
      '',
      'soon',
      '1h30m',
      '5w',
      '1e3s',
      true,
      null,
      [],
      {},
      Number.NaN,
      Infinity,
      undefined,
    ]) {
      const r = parseDuration(bad);
      expect(r.ok, String(bad)).toBe(false);
      if (!r.ok) expect(r.message).toMatch(/^expected a duration such as 30 \(seconds\) or "30s"/);
    }
    expect(parseDuration(undefined)).toMatchObject({ message: expect.stringMatching(/; got nothing$/) });
  });

  it('refuses negative durations', () => {
    expect(parseDuration(-5)).toEqual({ ok: false, message: 'must not be negative (got -5)' });
    expect(parseDuration('-5s')).toEqual({ ok: false, message: 'must not be negative (got "-5s")' });
  });
});

describe('parseSize', () => {
  it('takes numbers as bytes and strings with decimal or binary units', () => {
    const cases: [unknown, number][] = [
      [1048576, 1048576],
      ['2048', 2048],
      ['512KiB', 512 * 1024],
      ['4GiB', 4 * 1024 ** 3],
      ['100MB', 100_000_000],
      ['1.5GB', 1_500_000_000],
      ['10MiB', 10 * 1024 ** 2],
      ['10 mib', 10 * 1024 ** 2],
      ['2Gi', 2 * 1024 ** 3],
      ['1TiB', 1024 ** 4],
      ['3kB', 3000],
      ['7B', 7],
      ['0.5KiB', 512],
    ];
    for (const [input, bytes] of cases) expect(parseSize(input), JSON.stringify(input)).toEqual(ok(bytes));
  });

  it('refuses anything else, and says both readings of an ambiguous unit', () => {
    expect(parseSize('4G')).toEqual({
      ok: false,
      message:
        'expected a size such as 1048576 (bytes) or "512KiB", "100MB", "4GiB"; got "4G" (did you mean "4GiB" (powers of 1024) or "4GB" (of 1000)?)',
    });
    for (const bad of ['', 'big', '4 gigabytes', '1PiB', false, null, {}, Number.NaN]) {
      const r = parseSize(bad);
      expect(r.ok, String(bad)).toBe(false);
    }
    expect(parseSize(-1)).toEqual({ ok: false, message: 'must not be negative (got -1)' });
  });
});

describe('formatDuration and formatSize', () => {
  it('write what a person would', () => {
    expect([250, 1000, 1500, 42_000, 300_000, 5_400_000, 86_400_000, 61_500].map(formatDuration)).toEqual([
      '250ms',
      '1s',
      '1.5s',
      '42s',
      '5m',
      '1h30m',
      '1d',
      '61.5s',
    ]);
    expect([512, 2048, 50 * 1024 ** 2, 4.25 * 1024 ** 3].map(formatSize)).toEqual([
      '512 B',
      '2 KiB',
      '50 MiB',
      '4.3 GiB',
    ]);
  });
});
