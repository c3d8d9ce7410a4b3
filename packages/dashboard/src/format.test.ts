import { describe, expect, it } from 'vitest';
import { ago, duration } from './format.js';

const now = Date.UTC(2026, 11, 3, 12, 0, 0);
const s = 1000;
const min = 60 * s;

describe('format', () => {
  it('duration keeps a tenth of a second under 10 s, whole units above', () => {
    expect([850, 4_200, 12_400, 3 * min + 5 * s, 5 * min, 2 * 60 * min + 10 * min].map(duration)).toEqual([
      '850 ms',
      '4.2 s',
      '12 s',
      '3 min 5 s',
      '5 min',
      '2 h 10 min',
    ]);
  });

  it('ago is as precise as duration, both ways', () => {
    expect(ago(now - 4_200, now)).toBe('4.2 s ago');
    expect(ago(now + 3 * min, now)).toBe('in 3 min');
    expect(ago(now - 300, now)).toBe('now');
    expect(ago(null, now)).toBe('—');
  });
});
