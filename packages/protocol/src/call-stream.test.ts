/** FrameReader: frames come out whole and in order however the bytes are cut. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FrameReader, FrameTooLargeError, readU32 } from './call-stream.js';

function framed(payloads: Uint8Array[]): Uint8Array {
  const total = payloads.reduce((n, p) => n + 4 + p.length, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of payloads) {
    new DataView(out.buffer).setUint32(at, p.length);
    out.set(p, at + 4);
    at += 4 + p.length;
  }
  return out;
}

/** `bytes` cut at the given offsets. */
function cut(bytes: Uint8Array, offsets: number[]): Uint8Array[] {
  const points = [...new Set(offsets.map((o) => o % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let from = 0;
  for (const p of [...points, bytes.length]) {
    chunks.push(bytes.subarray(from, p));
    from = p;
  }
  return chunks;
}

describe('FrameReader', () => {
  it('returns every frame whole and in order, however the stream is chunked', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 20 }),
        fc.array(fc.nat(), { maxLength: 30 }),
        (payloads, offsets) => {
          const reader = new FrameReader(300);
          const out: Uint8Array[] = [];
          for (const chunk of cut(framed(payloads), offsets)) out.push(...reader.push(chunk));
          expect(out.map((f) => [...f])).toEqual(payloads.map((p) => [...p]));
          expect(reader.pendingBytes).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses a frame longer than its limit as soon as the length prefix is in, even split', () => {
    const bytes = framed([new Uint8Array(10), new Uint8Array(101)]);
    for (const split of [1, 14, 15, 16, 17, 18]) {
      const reader = new FrameReader(100);
      const frames: Uint8Array[] = [];
      const run = () => {
        for (const chunk of [bytes.subarray(0, split), bytes.subarray(split, 19)])
          frames.push(...reader.push(chunk));
      };
      expect(run).toThrow(FrameTooLargeError);
      expect(frames.length <= 1).toBe(true);
    }
  });

  it('reads big-endian u32 lengths', () => {
    expect(readU32(Uint8Array.of(0xff, 0xff, 0xff, 0xff), 0)).toBe(0xffffffff);
    expect(readU32(Uint8Array.of(0, 1, 0, 2), 0)).toBe(65538);
  });
});
