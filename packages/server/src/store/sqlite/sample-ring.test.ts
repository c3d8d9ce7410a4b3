import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SampleRing } from '../../core/watchdog/samples.js';
import { decodeSamples, encodeSamples } from './sample-ring.js';

const metric = fc.option(fc.double({ noNaN: true }), { nil: null });
const sample = fc.tuple(fc.double({ noNaN: true, noDefaultInfinity: true }), metric, metric, metric);

describe('the SQLite sample ring encoding', () => {
  it('round-trips every sample exactly, nulls included, oldest first', () => {
    fc.assert(
      fc.property(fc.array(sample, { maxLength: 70 }), (samples) => {
        expect(decodeSamples(encodeSamples(SampleRing.of(samples))).toArray()).toEqual(samples);
      }),
    );
  });

  it('stores an empty ring as NULL and reads NULL, text or a short blob as empty', () => {
    expect(encodeSamples(SampleRing.EMPTY)).toBeNull();
    expect(decodeSamples(null).length).toBe(0);
    expect(decodeSamples('[]').length).toBe(0);
    expect(decodeSamples(Buffer.alloc(16)).length).toBe(0);
  });

  it('takes 32 bytes a sample: little-endian float64s, NaN for a metric not reported', () => {
    const stored = encodeSamples(SampleRing.of([[1, 2, null, 4]]))!;
    expect(stored.length).toBe(32);
    expect([0, 8, 16, 24].map((o) => stored.readDoubleLE(o))).toEqual([1, 2, Number.NaN, 4]);
  });

  it('reads a blob at any byte offset (the driver need not align it)', () => {
    const bytes = encodeSamples(SampleRing.of([[5, 6, 7, null]]))!;
    const odd = Buffer.alloc(bytes.length + 3);
    bytes.copy(odd, 3);
    expect(decodeSamples(odd.subarray(3)).toArray()).toEqual([[5, 6, 7, null]]);
  });
});
