/**
 * A TCP proxy on 127.0.0.1 in front of a server, which a test can partition: from `partition()` on,
 * every connection it holds — and every new one — is a black hole (bytes read and dropped, nothing
 * forwarded, nothing closed), as a network path that died silently looks to the endpoints: sockets
 * stay open and requests on them hang. `heal()` makes new connections work again; the old ones stay
 * dead, like keep-alive sockets whose other end forgot them. Everything is destroyed by `close()`.
 */

import type { AddressInfo } from 'node:net';
import { connect, createServer, type Server, type Socket } from 'node:net';

interface Pair {
  client: Socket;
  upstream: Socket;
  dead: boolean;
  /** The first line of the last request the client sent through (`POST /v1/agents/agt_1/claim HTTP/1.1`). */
  lastRequest: string;
  clientClosedAt: number | undefined;
}

export class TcpProxy {
  readonly pairs: Pair[] = [];
  private server: Server | undefined;
  private partitioned = false;
  port = 0;

  constructor(private readonly targetPort: number) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async listen(): Promise<this> {
    this.server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  partition(): void {
    this.partitioned = true;
    for (const p of this.pairs) p.dead = true;
  }

  heal(): void {
    this.partitioned = false;
  }

  async close(): Promise<void> {
    for (const p of this.pairs) {
      p.client.destroy();
      p.upstream.destroy();
    }
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const upstream = connect(this.targetPort, '127.0.0.1');
    const pair: Pair = {
      client,
      upstream,
      dead: this.partitioned,
      lastRequest: '',
      clientClosedAt: undefined,
    };
    this.pairs.push(pair);
    client.on('data', (chunk: Buffer) => {
      if (pair.dead) return;
      const first = chunk.toString('latin1', 0, Math.min(chunk.length, 200)).split('\r\n')[0] ?? '';
      if (/^[A-Z]+ \/\S* HTTP\/1\.[01]$/.test(first)) pair.lastRequest = first;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!pair.dead) client.write(chunk);
    });
    client.on('close', () => {
      pair.clientClosedAt = performance.now();
      if (!pair.dead) upstream.destroy();
    });
    upstream.on('close', () => {
      if (!pair.dead) client.destroy();
    });
    client.on('error', () => {});
    upstream.on('error', () => {});
  }
}
