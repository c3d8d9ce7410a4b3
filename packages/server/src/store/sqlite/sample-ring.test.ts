import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeSamples, encodeSamples } from './sample-ring.js';

const metric = fc.option(fc.double({ noNaN: true }), { nil: null });
const sample = fc.tuple(fc.double({ noNaN: true, noDefaultInfinity: true }), metric, metric, metric);

describe('the SQLite sample ring encoding', () => {
  it('round-trips every sample exactly, nulls included, oldest first', () => {
    fc.assert(
      fc.property(fc.array(sample, { maxLength: 70 }), (samples) => {
        expect(decodeSamples(encodeSamples(samples))).toEqual(samples);
      }),
    );
  });

  it('stores an empty ring as NULL and reads NULL, text or a short blob as empty', () => {
    expect(encodeSamples([])).toBeNull();
    expect(decodeSamples(null)).toEqual([]);
    expect(decodeSamples('[]')).toEqual([]);
    expect(decodeSamples(Buffer.alloc(16))).toEqual([]);
  });

  it('takes 32 bytes a sample', () => {
    expect(encodeSamples([[1, 2, null, 4]])?.length).toBe(32);
  });
});
