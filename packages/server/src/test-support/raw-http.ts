/**
 * Test support (not a test itself, not shipped): an HTTP/1.1 client over a bare TCP socket, for the
 * tests that are about bytes and connections — what a refused upload does to a keep-alive
 * connection, whether an answer arrives before a close, what Node's parser answers to malformed
 * requests. Requests are written as given; responses are parsed as they arrive.
 */
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: string;
}

export interface RawClose {
  /** The error the socket ended with (`ECONNRESET`, `EPIPE`, …), or null for a clean close. */
  error: string | null;
  /** Whether the server's FIN arrived (`end`) before the close. */
  ended: boolean;
}

export class RawConnection {
  private buffer = Buffer.alloc(0);
  private readonly waiters: (() => void)[] = [];
  private ended = false;
  private error: string | null = null;
  private readonly closedPromise: Promise<RawClose>;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.wake();
    });
    socket.on('end', () => {
      this.ended = true;
      this.wake();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      this.error ??= err.code ?? err.message;
      this.wake();
    });
    this.closedPromise = new Promise((resolve) => {
      socket.on('close', () => {
        this.wake();
        resolve({ error: this.error, ended: this.ended });
      });
    });
  }

  /** `allowHalfOpen`: do not close our side when the server closes its own (a client that hangs on). */
  static open(port: number, options: { allowHalfOpen?: boolean } = {}): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: options.allowHalfOpen ?? false });
      socket.once('connect', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  /** Write bytes as they are (one `write` call). */
  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  /** Stop reading for a while, as a busy client would. */
  pauseReading(ms: number): void {
    this.socket.pause();
    setTimeout(() => this.socket.resume(), ms).unref();
  }

  /**
   * The next complete response. `head`: the request was a HEAD (no body follows). Rejects when the
   * connection ends or fails first, or after `timeoutMs`.
   */
  async response(options: { head?: boolean; timeoutMs?: number } = {}): Promise<RawResponse> {
    const deadline = performance.now() + (options.timeoutMs ?? 5000);
    for (;;) {
      const parsed = this.parse(options.head ?? false);
      if (parsed) return parsed;
      if (this.socket.destroyed || this.ended) {
        throw new Error(
          `the connection ${this.error ? `failed (${this.error})` : 'closed'} before a complete response; got ${JSON.stringify(this.buffer.toString('latin1').slice(0, 300))}`,
        );
      }
      const left = deadline - performance.now();
      if (left <= 0) {
        throw new Error(
          `no complete response in time; got ${JSON.stringify(this.buffer.toString('latin1').slice(0, 300))}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Resolves when the socket is closed (after `end()`, the server closing, or an error). */
  closed(timeoutMs = 5000): Promise<RawClose> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<RawClose>((_, reject) => {
      timer = setTimeout(() => reject(new Error('the connection did not close in time')), timeoutMs);
    });
    return Promise.race([this.closedPromise, timeout]).finally(() => clearTimeout(timer));
  }

  /** Bytes received and not yet taken by `response()`. */
  get pending(): string {
    return this.buffer.toString('latin1');
  }

  end(): void {
    this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private parse(head: boolean): RawResponse | null {
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end < 0) return null;
    const lines = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1]);
    if (!Number.isInteger(status)) throw new Error(`not an HTTP response: ${JSON.stringify(lines[0])}`);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    const start = end + 4;
    let bodyEnd = start;
    if (!head && status !== 204 && status !== 304) {
      if (headers['transfer-encoding'] !== undefined) {
        throw new Error('chunked responses are not supported by this test client');
      }
      const length = Number(headers['content-length'] ?? Number.NaN);
      if (!Number.isInteger(length)) throw new Error(`a response without content-length: ${lines[0]}`);
      bodyEnd = start + length;
      if (this.buffer.length < bodyEnd) return null;
    }
    const body = this.buffer.subarray(start, bodyEnd).toString('utf8');
    this.buffer = this.buffer.subarray(bodyEnd);
    return { status, headers, body };
  }
}

/** A request head, CRLF-terminated, ready to be followed by its body. */
export function requestHead(method: string, path: string, headers: Record<string, string | number>): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}
