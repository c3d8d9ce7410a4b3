/**
 * Real receivers on 127.0.0.1 for the alert channels: an HTTP server recording what it is sent (a
 * webhook or a Slack incoming webhook), one that never answers, a port nothing listens on, and an
 * SMTP server (smtp-server) recording the mail it receives.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface HttpReceiver {
  url: string;
  requests: ReceivedRequest[];
  /** The status the next requests are answered with. */
  status: number;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** Records every request; answers `status` (200 by default, body `ok` as Slack does). */
export async function startHttpReceiver(status = 200): Promise<HttpReceiver> {
  const r: HttpReceiver = {
    url: '',
    requests: [],
    status,
    close: async () => closeServer(server),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      r.requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.writeHead(r.status, { 'content-type': 'text/plain' }).end(r.status < 300 ? 'ok' : 'unavailable');
    });
  });
  r.url = `http://127.0.0.1:${await listen(server)}/hook`;
  return r;
}

/** Takes requests and never answers them (until closed). `received` counts the requests that arrived. */
export async function startHangingReceiver(): Promise<{
  url: string;
  received: () => number;
  close(): Promise<void>;
}> {
  let received = 0;
  const server = createServer((req) => {
    req.resume();
    req.on('end', () => {
      received += 1;
    });
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}/hook`, received: () => received, close: () => closeServer(server) };
}

/** A URL on a port nothing listens on (connections are refused). */
export async function refusedUrl(): Promise<string> {
  const server = createServer();
  const port = await listen(server);
  await closeServer(server);
  return `http://127.0.0.1:${port}/hook`;
}

export interface ReceivedMail {
  from: string;
  to: string[];
  /** The raw message (headers and body). */
  data: string;
}

/** A plain SMTP server (no TLS, no auth) recording every message. */
export async function startSmtpReceiver(): Promise<{
  port: number;
  mails: ReceivedMail[];
  close(): Promise<void>;
}> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          data: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { port, mails, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
