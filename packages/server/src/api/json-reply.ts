/**
 * The JSON text of replies. The same text as `JSON.stringify`, made cheaper to send when it is large.
 *
 * V8's `JSON.stringify` returns a long result as a rope of parts. Sending it needs it flat — its UTF-8
 * length for `Content-Length`, then its bytes — and flattening a rope of several hundred KB into one
 * fresh string cost more than the stringify itself on the reference machine (a batch reply of 1,000
 * tasks, 845 KB: stringify 2.1 ms, flatten 2.6 ms, length and encoding 0.4 ms). So a top-level array
 * longer than {@link SLICE} items (a batch's or a list page's tasks) is stringified a slice at a time,
 * and each slice is encoded straight into one growing buffer while it is small: each slice's text is
 * flattened once and its bytes copied once. The slices keep their brackets when written; each one
 * after the first overwrites the previous one's `]` and turns its own `[` into a comma. Anything else
 * is plain `JSON.stringify`.
 */

/** Items stringified at a time: a slice of tasks is some tens of KB. */
const SLICE = 64;

/** `JSON.stringify(payload)`, as bytes when that is cheaper to send. */
export function jsonReplyBody(payload: unknown): string | Buffer {
  if (!isPlainObject(payload) || !Object.values(payload).some(isLongArray)) return JSON.stringify(payload);
  const out = new ByteWriter();
  out.write('{');
  let first = true;
  for (const key of Object.keys(payload)) {
    const value = payload[key];
    if (!isLongArray(value)) {
      const member = JSON.stringify(value) as string | undefined;
      if (member === undefined) continue; // as JSON.stringify leaves out undefined, functions and symbols
      out.write(`${first ? '' : ','}${JSON.stringify(key)}:${member}`);
      first = false;
      continue;
    }
    out.write(`${first ? '' : ','}${JSON.stringify(key)}:`);
    first = false;
    for (let i = 0; i < value.length; i += SLICE) {
      const slice = JSON.stringify(value.slice(i, i + SLICE));
      if (i === 0) {
        out.write(slice);
        // The rest of the array is about as large per item as its first slice.
        out.reserve(Math.ceil((out.length / SLICE) * (value.length - SLICE) * 1.1));
      } else {
        out.continueArray(slice);
      }
    }
  }
  out.write('}');
  return out.bytes();
}

const COMMA = 0x2c;

/** UTF-8 bytes appended to one buffer that doubles when full. */
class ByteWriter {
  private buf = Buffer.allocUnsafe(64 * 1024);
  length = 0;

  write(text: string): void {
    const n = Buffer.byteLength(text);
    this.reserve(n);
    this.length += this.buf.write(text, this.length);
  }

  /** Append the JSON array `text` to the array just written: its items follow the previous ones. */
  continueArray(text: string): void {
    this.length -= 1; // the previous slice's `]`
    const at = this.length;
    this.write(text);
    this.buf[at] = COMMA; // was this slice's `[`
  }

  /** Room for `n` more bytes. */
  reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.length + n, this.buf.length * 2));
    this.buf.copy(grown, 0, 0, this.length);
    this.buf = grown;
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

/** An array stringified in slices: longer than {@link SLICE}, without a `toJSON` of its own. */
function isLongArray(v: unknown): v is unknown[] {
  return Array.isArray(v) && v.length > SLICE && !hasToJSON(v);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || hasToJSON(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function hasToJSON(v: object): boolean {
  return typeof (v as { toJSON?: unknown }).toJSON === 'function';
}
