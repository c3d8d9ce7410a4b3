import { describe, expect, it } from 'vitest';
import { newId } from './ids.js';

describe('newId', () => {
  it('is prefixed, 26 Crockford base32 characters after the prefix', () => {
    expect(newId('tsk', 1_700_000_000_000)).toMatch(/^tsk_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(newId('agt', 1_700_000_000_000)).toMatch(/^agt_[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it('sorts by time, and monotonically within one millisecond and when the clock goes back', () => {
    const ids = [newId('tsk', 1_800_000_000_000)];
    for (let i = 0; i < 5000; i++) ids.push(newId('tsk', 1_800_000_000_000));
    ids.push(newId('tsk', 1_799_999_999_000));
    ids.push(newId('tsk', 1_800_000_000_001));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('encodes the creation time in the first 10 characters', () => {
    const a = newId('tsk', 1_900_000_000_000).slice(4, 14);
    const b = newId('tsk', 1_900_000_000_001).slice(4, 14);
    expect(a < b).toBe(true);
    const decode = (s: string) =>
      [...s].reduce((n, c) => n * 32 + '0123456789ABCDEFGHJKMNPQRSTVWXYZ'.indexOf(c), 0);
    expect(decode(a)).toBe(1_900_000_000_000);
  });
});
