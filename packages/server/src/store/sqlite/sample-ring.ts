/**
 * SQLite keeps an agent's metric samples as one BLOB of little-endian float64s, four per sample
 * (`at, rssBytes, cpuPercent, iterationMs`; NaN for a metric the agent did not report). A heartbeat
 * rewrites the ring, so its encoding is on the hot path: a JSON ring of 64 samples cost ~40 µs a beat
 * in text formatting and parsing alone; this one is a copy. Every finite number round-trips exactly.
 */

import type { MetricSample } from '../../core/watchdog/samples.js';

const FIELDS = 4;
const BYTES = FIELDS * 8;

/** The ring as stored; null for an empty one. */
export function encodeSamples(samples: readonly (readonly (number | null)[])[]): Buffer | null {
  if (samples.length === 0) return null;
  const buf = Buffer.allocUnsafe(samples.length * BYTES);
  let offset = 0;
  for (const s of samples) {
    for (let f = 0; f < FIELDS; f++) {
      buf.writeDoubleLE(s[f] ?? Number.NaN, offset);
      offset += 8;
    }
  }
  return buf;
}

/** The stored ring back as `[at, rssBytes, cpuPercent, iterationMs]` tuples, oldest first. */
export function decodeSamples(stored: unknown): MetricSample[] {
  if (!(stored instanceof Uint8Array) || stored.length < BYTES) return [];
  const buf = Buffer.isBuffer(stored) ? stored : Buffer.from(stored);
  const n = Math.floor(buf.length / BYTES);
  const out = new Array<MetricSample>(n);
  for (let i = 0, offset = 0; i < n; i++, offset += BYTES) {
    out[i] = [
      buf.readDoubleLE(offset),
      orNull(buf.readDoubleLE(offset + 8)),
      orNull(buf.readDoubleLE(offset + 16)),
      orNull(buf.readDoubleLE(offset + 24)),
    ];
  }
  return out;
}

const orNull = (v: number): number | null => (Number.isNaN(v) ? null : v);
