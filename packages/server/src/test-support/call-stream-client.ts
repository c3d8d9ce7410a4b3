/**
 * Test support (not a test itself, not shipped): a call-stream client over a bare socket, for the
 * tests of the coordinator's side of the call stream. Frames are written as given (malformed ones
 * too); answers are collected by id.
 */
import { request } from 'node:http';
import type { Socket } from 'node:net';
import { CALL_FRAME, CALL_STREAM_PATH, CALL_STREAM_PROTOCOL, FrameReader, readU32 } from '@rouse/protocol';

export interface StreamAnswer {
  status: number;
  body: unknown;
}

/** What an upgrade request was answered with when it was not upgraded. */
export interface Refusal {
  status: number;
  body: unknown;
}

export class RawCallStream {
  private readonly reader = new FrameReader(64 * 1024 * 1024);
  private readonly answers = new Map<number, StreamAnswer>();
  private readonly waiters = new Map<number, (a: StreamAnswer) => void>();
  private nextId = 1;
  /** Resolves when the socket closes. */
  readonly closed: Promise<void>;

  constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      for (const f of this.reader.push(chunk)) {
        const b = Buffer.from(f.buffer, f.byteOffset, f.length);
        const id = readU32(b, 0);
        const text = b.subarray(6).toString('utf8');
        const answer = { status: b.readUInt16BE(4), body: text === '' ? undefined : JSON.parse(text) };
        const waiter = this.waiters.get(id);
        if (waiter) {
          this.waiters.delete(id);
          waiter(answer);
        } else this.answers.set(id, answer);
      }
    });
    socket.on('error', () => {});
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
  }

  /** Send a call frame; returns its id. `body`: JSON text or bytes as they should go on the wire. */
  send(method: string, path: string, body?: string | Buffer, id = this.nextId++): number {
    const target = Buffer.from(`${method} ${path}`);
    const bytes = body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(body) ? body : Buffer.from(body);
    const frame = Buffer.alloc(4 + 4 + 1 + 2 + target.length + bytes.length);
    frame.writeUInt32BE(frame.length - 4, 0);
    frame.writeUInt32BE(id, 4);
    frame[8] = CALL_FRAME.call;
    frame.writeUInt16BE(target.length, 9);
    target.copy(frame, 11);
    bytes.copy(frame, 11 + target.length);
    this.socket.write(frame);
    return id;
  }

  /** Send a call and wait for its answer. */
  call(method: string, path: string, body?: unknown): Promise<StreamAnswer> {
    return this.answer(this.send(method, path, body === undefined ? undefined : JSON.stringify(body)));
  }

  cancel(id: number): void {
    const frame = Buffer.alloc(9);
    frame.writeUInt32BE(5, 0);
    frame.writeUInt32BE(id, 4);
    frame[8] = CALL_FRAME.cancel;
    this.socket.write(frame);
  }

  answer(id: number): Promise<StreamAnswer> {
    const done = this.answers.get(id);
    if (done) {
      this.answers.delete(id);
      return Promise.resolve(done);
    }
    return new Promise((resolve) => this.waiters.set(id, resolve));
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Open a call stream (or see how the upgrade is refused). */
export function openCallStream(
  url: string,
  token: string | null,
  options: { path?: string; protocol?: string } = {},
): Promise<RawCallStream | Refusal> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${options.path ?? CALL_STREAM_PATH}`, {
      method: 'GET',
      agent: false,
      headers: {
        connection: 'Upgrade',
        upgrade: options.protocol ?? CALL_STREAM_PROTOCOL,
        ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      },
    });
    req.on('upgrade', (_res, socket: Socket) => resolve(new RawCallStream(socket)));
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}
