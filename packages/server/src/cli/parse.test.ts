import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { parseDuration, parseDurationRange, parseLabel, parseList, parseRunAt } from './parse.js';

describe('option parsers', () => {
  it('durations: a number and its unit, decimals too', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('5s')).toBe(5000);
    expect(parseDuration('1.5s')).toBe(1500);
    expect(parseDuration('1.5m')).toBe(90_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration(' 3 s ')).toBe(3000);
    expect(parseDuration('0')).toBe(0); // the one number that needs no unit
    expect(() => parseDuration('5 parsecs')).toThrow(InvalidArgumentError);
    expect(() => parseDuration('-5s')).toThrow(/is not a duration; write a number and its unit/);
  });

  it('a bare number is refused with the fix, not read as milliseconds', () => {
    expect(() => parseDuration('5')).toThrow(InvalidArgumentError);
    expect(() => parseDuration('5')).toThrow('"5" has no unit; write 5s (or 5000ms)');
    expect(() => parseDuration('1.5')).toThrow('"1.5" has no unit; write 1.5s (or 1500ms)');
    expect(() => parseDuration('250')).toThrow('"250" has no unit; write 250ms (or 0.25s)');
  });

  it('ranges', () => {
    expect(parseDurationRange('5s..5m')).toEqual({ min: 5000, max: 300_000 });
    expect(parseDurationRange('0..1.5s')).toEqual({ min: 0, max: 1500 });
    expect(() => parseDurationRange('5m..5s')).toThrow(/max must not be below min/);
    expect(() => parseDurationRange('5s')).toThrow(/min\.\.max/);
    expect(() => parseDurationRange('5..300')).toThrow('"5" has no unit; write 5s (or 5000ms)');
  });

  it('run-at: relative (with a unit), epoch ms, ISO', () => {
    expect(parseRunAt('+30s', 1000)).toBe(31_000);
    expect(parseRunAt('+1.5m', 0)).toBe(90_000);
    expect(parseRunAt('1764450000000', 0)).toBe(1_764_450_000_000);
    expect(parseRunAt('2025-01-01T00:00:00Z', 0)).toBe(Date.UTC(2025, 0, 1));
    expect(() => parseRunAt('someday', 0)).toThrow(InvalidArgumentError);
    expect(() => parseRunAt('+30', 0)).toThrow('"+30" has no unit; write +30s (or +30000ms)');
    // a small number is a delay someone forgot the + and the unit of, not a time in 1970
    expect(() => parseRunAt('30', 0)).toThrow('"30" is not a time: for a delay write +30s');
  });

  it('labels and lists accumulate', () => {
    expect(parseLabel('b=2=x', parseLabel('a=1'))).toEqual({ a: '1', b: '2=x' });
    expect(() => parseLabel('novalue')).toThrow(/key=value/);
    expect(parseList('c', parseList('a, b'))).toEqual(['a', 'b', 'c']);
  });
});
