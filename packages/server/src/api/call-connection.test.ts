/**
 * One call-stream connection over a real loopback socket: a call that arrives after the coordinator
 * ended its side of the stream (here: idle) is not started, so a client that sees the stream end
 * without an answer knows the call did nothing; and a client that keeps its side open after the end
 * (half-open) is cut off after a grace, as is one whose upgrade was refused.
 */
import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RawCallStream } from '../test-support/call-stream-client.js';
import { CallConnection, endThenCut } from './call-connection.js';

let server: Server | null = null;
afterEach(() => {
  server?.close();
  server = null;
});

/** Both ends of a loopback connection, each keeping its side open when the other ends (half-open). */
async function halfOpenPair(): Promise<{ client: Socket; socket: Socket }> {
  const accepted = new Promise<Socket>((resolve) => {
    server = createServer({ allowHalfOpen: true }, resolve);
  });
  server!.listen(0, '127.0.0.1');
  await once(server!, 'listening');
  const { port } = server!.address() as { port: number };
  const client = createConnection({ port, host: '127.0.0.1', allowHalfOpen: true });
  client.on('error', () => {});
  return { client, socket: await accepted };
}

/** A connection on the coordinator's side that records the calls it starts; the client's socket. */
async function connected(idleTimeoutMs: number, closeGraceMs = 60_000) {
  const started: string[] = [];
  let closed!: () => void;
  const whenClosed = new Promise<void>((resolve) => {
    closed = resolve;
  });
  const { client, socket } = await halfOpenPair();
  new CallConnection(
    socket,
    1024 * 1024,
    async (target) => {
      started.push(target);
      return { status: 200, body: '{}' };
    },
    () => {},
    closed,
    idleTimeoutMs,
    closeGraceMs,
  );
  return { client, started, whenClosed };
}

describe('call connection', () => {
  it('answers calls while open; a call that arrives after it ended idle is not started, and the connection closes', async () => {
    const { client, started, whenClosed } = await connected(100);
    const stream = new RawCallStream(client);
    expect(await stream.call('POST', '/v1/tasks', { type: 't' })).toEqual({ status: 200, body: {} });
    expect(started).toEqual(['POST /v1/tasks']);

    await once(client, 'end'); // idle: the coordinator ended its side
    stream.send('POST', '/v1/tasks', '{"type":"t"}');
    await whenClosed; // a client still sending after the end is cut off
    client.destroy();
    expect(started).toEqual(['POST /v1/tasks']);
  });

  it('a client that never closes its side after the idle end is cut off after the grace', async () => {
    const { client, whenClosed } = await connected(100, 200);
    await once(client, 'end'); // ended idle; this client (half-open) does not close its side
    await whenClosed;
    client.destroy();
  }, 10_000);

  it('endThenCut (a refused upgrade too) writes its last bytes, then cuts a peer that keeps its side open', async () => {
    const { client, socket } = await halfOpenPair();
    let received = '';
    client.on('data', (d: Buffer) => {
      received += d.toString();
    });
    const closed = once(socket, 'close');
    endThenCut(socket, 100, 'HTTP/1.1 404 Not Found\r\n\r\n');
    await once(client, 'end');
    expect(received).toBe('HTTP/1.1 404 Not Found\r\n\r\n');
    await closed; // the client never closed its side
    client.destroy();
  }, 10_000);
});
