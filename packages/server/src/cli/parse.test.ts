import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { parseDuration, parseDurationRange, parseLabel, parseList, parseRunAt } from './parse.js';

describe('option parsers', () => {
  it('durations', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('5s')).toBe(5000);
    expect(parseDuration('1.5m')).toBe(90_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('250')).toBe(250);
    expect(() => parseDuration('5 parsecs')).toThrow(InvalidArgumentError);
  });

  it('ranges', () => {
    expect(parseDurationRange('5s..5m')).toEqual({ min: 5000, max: 300_000 });
    expect(() => parseDurationRange('5m..5s')).toThrow(/max must not be below min/);
    expect(() => parseDurationRange('5s')).toThrow(/min\.\.max/);
  });

  it('run-at: relative, epoch ms, ISO', () => {
    expect(parseRunAt('+30s', 1000)).toBe(31_000);
    expect(parseRunAt('1764450000000', 0)).toBe(1_764_450_000_000);
    expect(parseRunAt('2025-01-01T00:00:00Z', 0)).toBe(Date.UTC(2025, 0, 1));
    expect(() => parseRunAt('someday', 0)).toThrow(InvalidArgumentError);
  });

  it('labels and lists accumulate', () => {
    expect(parseLabel('b=2=x', parseLabel('a=1'))).toEqual({ a: '1', b: '2=x' });
    expect(() => parseLabel('novalue')).toThrow(/key=value/);
    expect(parseList('c', parseList('a, b'))).toEqual(['a', 'b', 'c']);
  });
});
