/**
 * SQLite keeps an agent's metric samples as one BLOB of little-endian float64s, four per sample
 * (`at, rssBytes, cpuPercent, iterationMs`; NaN for a metric the agent did not report): the bytes of
 * the in-memory {@link SampleRing}. A heartbeat reads and rewrites the ring, so both ways are one
 * copy of the bytes (a JSON ring of 64 samples cost ~40 µs a beat in text alone, and tuples one
 * object per sample). Every finite number round-trips exactly.
 */
import { endianness } from 'node:os';
import { SAMPLE_FIELDS, SampleRing } from '../../core/watchdog/samples.js';

const BYTES = SAMPLE_FIELDS * 8;
/** Float64Array is the machine's byte order; the stored ring is little-endian on every machine. */
const LITTLE_ENDIAN = endianness() === 'LE';

/** The ring as stored; null for an empty one. */
export function encodeSamples(ring: SampleRing): Buffer | null {
  if (ring.length === 0) return null;
  const { data } = ring;
  if (LITTLE_ENDIAN) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const buf = Buffer.allocUnsafe(data.byteLength);
  for (let i = 0; i < data.length; i++) buf.writeDoubleLE(data[i]!, i * 8);
  return buf;
}

/** The stored ring back (a trailing partial sample is left out). */
export function decodeSamples(stored: unknown): SampleRing {
  if (!(stored instanceof Uint8Array) || stored.length < BYTES) return SampleRing.EMPTY;
  const bytes = stored.length - (stored.length % BYTES);
  const data = new Float64Array(bytes / 8);
  if (LITTLE_ENDIAN) {
    // copied: the blob's bytes need not be 8-byte aligned for a Float64Array view
    new Uint8Array(data.buffer).set(stored.subarray(0, bytes));
  } else {
    const view = new DataView(stored.buffer, stored.byteOffset, bytes);
    for (let i = 0; i < data.length; i++) data[i] = view.getFloat64(i * 8, true);
  }
  return SampleRing.fromData(data);
}
