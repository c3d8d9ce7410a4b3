/**
 * The call stream: the hot calls of the HTTP API (creates, claims, heartbeats, completions) sent as
 * frames over one upgraded connection instead of as one HTTP request each. A call means exactly what
 * the same HTTP request means — same route, body, auth, limits, status and answer body — only the
 * envelope differs. Every other route stays HTTP-only.
 *
 * Opening: `GET /v1/calls` with `Connection: Upgrade`, `Upgrade: rouse-calls.v1` and the bearer
 * token; `101 Switching Protocols` opens the stream, anything else is an ordinary HTTP answer
 * (401 for a bad token). The token is checked again for every call, as HTTP does per request.
 *
 * Frames, each `u32 length` (big-endian, the bytes after it) then:
 * - call (client → coordinator): `u32 id`, `u8 1`, `u16 target length`, target (`POST /v1/tasks`,
 *   UTF-8), then the JSON body (may be empty).
 * - cancel (client → coordinator): `u32 id`, `u8 2`: the caller stopped waiting (a long-poll).
 * - answer (coordinator → client): `u32 id`, `u16 HTTP status`, then the JSON body.
 *
 * Calls are answered in any order; ids are the client's (non-zero, unique among its open calls).
 */

/** Where a call stream is opened. */
export const CALL_STREAM_PATH = '/v1/calls';
/** The `Upgrade` token of this version of the call stream. */
export const CALL_STREAM_PROTOCOL = 'rouse-calls.v1';

/** Frame kinds sent to the coordinator. */
export const CALL_FRAME = { call: 1, cancel: 2 } as const;

/** Bytes of a call frame before its target: length, id, kind, target length. */
export const CALL_HEADER_BYTES = 4 + 4 + 1 + 2;
/** Bytes of an answer frame before its body: length, id, status. */
export const ANSWER_HEADER_BYTES = 4 + 4 + 2;

/** The routes a call stream carries, as `METHOD path` with `:name` path parameters. */
export const STREAMED_ROUTES = [
  'POST /v1/tasks',
  'POST /v1/tasks/batch',
  'POST /v1/agents/:agentId/claim',
  'POST /v1/agents/:agentId/heartbeat',
  'POST /v1/tasks/:id/start',
  'POST /v1/tasks/:id/heartbeat',
  'POST /v1/tasks/:id/complete',
  'POST /v1/tasks/:id/fail',
] as const;

/** A frame longer than the reader allows (the stream cannot go on: its framing is lost). */
export class FrameTooLargeError extends Error {
  constructor(
    readonly frameBytes: number,
    readonly limitBytes: number,
  ) {
    super(`a call stream frame of ${frameBytes} bytes exceeds the limit of ${limitBytes} bytes`);
  }
}

/**
 * Splits a byte stream into frames (each without its length prefix). Bytes of a frame that arrived
 * in one chunk are returned without a copy.
 */
export class FrameReader {
  private parts: Uint8Array[] = [];
  private buffered = 0;

  constructor(private readonly maxFrameBytes: number) {}

  /** Bytes received but not yet returned as a frame. */
  get pendingBytes(): number {
    return this.buffered;
  }

  /** Add a chunk; returns the frames it completed, in order. Throws {@link FrameTooLargeError}. */
  push(chunk: Uint8Array): Uint8Array[] {
    const frames: Uint8Array[] = [];
    let data = chunk;
    if (this.buffered > 0) {
      this.parts.push(chunk);
      this.buffered += chunk.length;
      if (this.buffered < 4) return frames;
      const n = this.peekLength();
      if (n > this.maxFrameBytes) throw new FrameTooLargeError(n, this.maxFrameBytes);
      if (this.buffered < 4 + n) return frames;
      data = this.takeAll();
    }
    let at = 0;
    while (data.length - at >= 4) {
      const n = readU32(data, at);
      if (n > this.maxFrameBytes) throw new FrameTooLargeError(n, this.maxFrameBytes);
      if (data.length - at - 4 < n) break;
      frames.push(data.subarray(at + 4, at + 4 + n));
      at += 4 + n;
    }
    if (at < data.length) {
      const rest = data.subarray(at);
      if (rest.length >= 4 && readU32(rest, 0) > this.maxFrameBytes) {
        throw new FrameTooLargeError(readU32(rest, 0), this.maxFrameBytes);
      }
      this.parts = [rest];
      this.buffered = rest.length;
    }
    return frames;
  }

  /** The length prefix of the buffered frame (at least 4 bytes are buffered). */
  private peekLength(): number {
    const first = this.parts[0]!;
    if (first.length >= 4) return readU32(first, 0);
    const head = new Uint8Array(4);
    let filled = 0;
    for (const p of this.parts) {
      const take = Math.min(4 - filled, p.length);
      head.set(p.subarray(0, take), filled);
      filled += take;
      if (filled === 4) break;
    }
    return readU32(head, 0);
  }

  private takeAll(): Uint8Array {
    const all = new Uint8Array(this.buffered);
    let at = 0;
    for (const p of this.parts) {
      all.set(p, at);
      at += p.length;
    }
    this.parts = [];
    this.buffered = 0;
    return all;
  }
}

/** Big-endian u32 at `at`. */
export function readU32(bytes: Uint8Array, at: number): number {
  return ((bytes[at]! << 24) >>> 0) + (bytes[at + 1]! << 16) + (bytes[at + 2]! << 8) + bytes[at + 3]!;
}
