/**
 * One call stream's connection (`call-stream.ts` dispatches its calls): splits the bytes into frames,
 * keeps the calls in flight by id, writes each answer as it is ready (several in one write when they
 * are ready in the same turn), and bounds what the connection may hold — the calls in flight
 * ({@link MAX_CALLS_IN_FLIGHT}) and their frames' bytes ({@link MAX_IN_FLIGHT_BYTES}), the answers
 * its client has not read ({@link MAX_UNWRITTEN_BYTES}) — by not reading until there is room. A frame
 * that breaks the framing closes the connection; one idle for {@link IDLE_TIMEOUT_MS} with nothing in
 * flight is ended, and cut {@link CLOSE_GRACE_MS} later if its client has not closed it. Every call started is answered unless the connection is cut: the stream ends only
 * with nothing in flight, and a call that arrives after it ended is not started.
 */
import type { Socket } from 'node:net';
import {
  ANSWER_HEADER_BYTES,
  CALL_FRAME,
  CALL_HEADER_BYTES,
  FrameReader,
  FrameTooLargeError,
  readU32,
} from '@rouse/protocol';

/** Calls one connection may have in flight; it is not read further until one is answered. */
export const MAX_CALLS_IN_FLIGHT = 1024;
/** Frame bytes of the calls in flight above which a connection is not read further. */
export const MAX_IN_FLIGHT_BYTES = 32 * 1024 * 1024;
/** Answer bytes a connection may have waiting to be written before it is not read further. */
export const MAX_UNWRITTEN_BYTES = 8 * 1024 * 1024;
/** A connection with nothing in flight and nothing received for this long is ended (as keep-alive). */
export const IDLE_TIMEOUT_MS = 72_000;
/**
 * How long a client has, once the coordinator has ended a stream, to close its side before the
 * connection is cut (a client that never does would otherwise hold it open for good).
 */
export const CLOSE_GRACE_MS = 10_000;
/** The longest call target (`POST /v1/agents/{id}/heartbeat` with the longest id, and room to spare). */
export const MAX_TARGET_BYTES = 1024;
/** A call frame's fields before its target, after the length prefix: id, kind, target length. */
export const CALL_FIELD_BYTES = CALL_HEADER_BYTES - 4;

/** A call's answer: its status, and its JSON body as text or bytes. */
export interface Answer {
  status: number;
  body: string | Buffer;
}

/** Answers one call: its target (`POST /v1/tasks`), body bytes, and its abort signal when asked for. */
export type AnswerCall = (target: string, body: Buffer, signal: () => AbortSignal) => Promise<Answer>;

/** One open call stream. */
export class CallConnection {
  private readonly reader: FrameReader;
  /** Calls in flight by id: the controller of a call whose handler asked for a signal. */
  private readonly inFlight = new Map<number, AbortController | undefined>();
  /** The frame bytes of the calls in flight. */
  private inFlightBytes = 0;
  private corked = false;
  private paused = false;
  private ending = false;

  /**
   * `answer` answers one call (it never rejects, but for a bug: then `lost` is told and the stream
   * is cut); `onClose` runs once the socket is closed.
   */
  constructor(
    private readonly socket: Socket,
    maxFrameBytes: number,
    private readonly answer: AnswerCall,
    private readonly lost: (err: unknown) => void,
    onClose: () => void,
    idleTimeoutMs = IDLE_TIMEOUT_MS,
    private readonly closeGraceMs = CLOSE_GRACE_MS,
  ) {
    this.reader = new FrameReader(maxFrameBytes);
    socket.setNoDelay(true);
    socket.setTimeout(idleTimeoutMs, () => {
      if (this.inFlight.size === 0) this.end();
    });
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    // The client is done (its SDK closes streams whole): whatever it waits for, it will not read.
    socket.on('end', () => socket.destroy());
    socket.on('drain', () => this.resumeIfRoom());
    socket.on('close', () => {
      for (const controller of this.inFlight.values()) controller?.abort();
      this.inFlight.clear();
      onClose();
    });
  }

  receive(chunk: Buffer): void {
    // Once this side has ended (idle, or shutting down), no answer can be written: a call that
    // arrives now is not started, so that the client, which sees the stream end without its
    // answer, may trust that nothing was done (a create not made twice, a completion not lost).
    // A client still sending has not seen the end yet: the connection is closed.
    if (this.socket.writableEnded) {
      this.destroy();
      return;
    }
    let frames: Uint8Array[];
    try {
      frames = this.reader.push(chunk);
    } catch (err) {
      if (!(err instanceof FrameTooLargeError)) throw err;
      this.destroy();
      return;
    }
    for (const f of frames) {
      if (this.socket.destroyed || this.socket.writableEnded) return;
      this.frame(Buffer.from(f.buffer, f.byteOffset, f.length));
    }
  }

  /** End the stream once nothing is in flight (the coordinator is shutting down). */
  endWhenIdle(): void {
    this.ending = true;
    if (this.inFlight.size === 0) this.end();
  }

  destroy(): void {
    this.socket.destroy();
  }

  /** End this side of the stream; the connection is cut if the client has not closed within the grace. */
  private end(): void {
    endThenCut(this.socket, this.closeGraceMs);
  }

  private frame(f: Buffer): void {
    if (f.length < CALL_FIELD_BYTES - 2) {
      this.destroy();
      return;
    }
    const id = readU32(f, 0);
    const kind = f[4];
    if (kind === CALL_FRAME.cancel) {
      this.inFlight.get(id)?.abort();
      return;
    }
    const targetBytes = f.length < CALL_FIELD_BYTES ? 0 : f.readUInt16BE(CALL_FIELD_BYTES - 2);
    if (
      kind !== CALL_FRAME.call ||
      f.length < CALL_FIELD_BYTES + targetBytes ||
      targetBytes > MAX_TARGET_BYTES ||
      id === 0 ||
      this.inFlight.has(id)
    ) {
      // Not a frame of this protocol, or an id that would make answers ambiguous: the stream is lost.
      this.destroy();
      return;
    }
    const target = f.toString('utf8', CALL_FIELD_BYTES, CALL_FIELD_BYTES + targetBytes);
    const body = f.subarray(CALL_FIELD_BYTES + targetBytes);
    this.inFlight.set(id, undefined);
    this.inFlightBytes += f.length;
    this.pauseIfFull();
    const signal = (): AbortSignal => {
      let controller = this.inFlight.get(id);
      if (controller === undefined) {
        controller = new AbortController();
        if (this.inFlight.has(id)) this.inFlight.set(id, controller);
        else controller.abort(); // the connection is gone already
      }
      return controller.signal;
    };
    void this.answer(target, body, signal)
      .then((answer) => this.settle(id, f.length, answer))
      .catch((err: unknown) => {
        this.lost(err);
        this.destroy();
      });
  }

  private settle(id: number, frameBytes: number, answer: Answer): void {
    if (!this.inFlight.delete(id) || this.socket.destroyed) return;
    this.inFlightBytes -= frameBytes;
    this.write(id, answer);
    if (this.ending && this.inFlight.size === 0) this.end();
    else this.resumeIfRoom();
  }

  private write(id: number, answer: Answer): void {
    const body = answer.body;
    const bodyBytes = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    const small = typeof body === 'string';
    const head = Buffer.allocUnsafe(ANSWER_HEADER_BYTES + (small ? bodyBytes : 0));
    head.writeUInt32BE(ANSWER_HEADER_BYTES - 4 + bodyBytes, 0);
    head.writeUInt32BE(id, 4);
    head.writeUInt16BE(answer.status, 8);
    if (small) head.write(body, ANSWER_HEADER_BYTES);
    if (!this.corked) {
      // Answers ready in the same turn leave in one write.
      this.corked = true;
      this.socket.cork();
      process.nextTick(() => {
        this.corked = false;
        this.socket.uncork();
      });
    }
    this.socket.write(head);
    if (!small) this.socket.write(body);
    this.pauseIfFull();
  }

  /** The connection holds as much as it may: too many calls or frame bytes in flight, or unread answers. */
  private full(): boolean {
    return (
      this.inFlight.size >= MAX_CALLS_IN_FLIGHT ||
      this.inFlightBytes > MAX_IN_FLIGHT_BYTES ||
      this.socket.writableLength > MAX_UNWRITTEN_BYTES
    );
  }

  private pauseIfFull(): void {
    if (this.paused || !this.full()) return;
    this.paused = true;
    this.socket.pause();
  }

  private resumeIfRoom(): void {
    if (!this.paused || this.full()) return;
    this.paused = false;
    this.socket.resume();
  }
}

/**
 * End `socket`, writing `last` first, and cut it if the peer has not closed its side within
 * `graceMs`: a peer that never does would otherwise hold the connection open for good.
 */
export function endThenCut(socket: Socket, graceMs: number, last?: string): void {
  if (socket.writableEnded) return;
  if (last === undefined) socket.end();
  else socket.end(last);
  const cut = setTimeout(() => socket.destroy(), graceMs);
  cut.unref();
  socket.once('close', () => clearTimeout(cut));
}
