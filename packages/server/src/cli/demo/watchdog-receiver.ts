/**
 * The watchdog act's own little web server on 127.0.0.1: the webhook its alert channel points at
 * (`POST /alerts`, each notification handed to `onAlert`), and a stand-in for the model API the
 * `api-user` agent calls (`GET /llm`), which answers 429 with Retry-After while `rateLimited` is set.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Alert, AlertNotificationKind } from '@rouse/protocol';

/** What a webhook channel posts (docs/policies.md "What a webhook receives"). */
export interface AlertDelivery {
  kind: AlertNotificationKind;
  title: string;
  text: string;
  alert: Pick<Alert, 'id' | 'group' | 'severity' | 'state' | 'agentIds' | 'summary'>;
}

export interface DemoReceiver {
  webhookUrl: string;
  llmApiUrl: string;
  /** While true, `GET /llm` answers 429 with `Retry-After: 2`. */
  rateLimited: boolean;
  /** Every notification received, in order. */
  deliveries: AlertDelivery[];
  close(): Promise<void>;
}

const MAX_BODY = 1024 * 1024;

export async function startDemoReceiver(onAlert: (d: AlertDelivery) => void): Promise<DemoReceiver> {
  const r: DemoReceiver = {
    webhookUrl: '',
    llmApiUrl: '',
    rateLimited: false,
    deliveries: [],
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/llm') {
      if (r.rateLimited) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '2' });
        res.end('{"error":"rate_limited"}');
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"completion":"ok"}');
      }
      return;
    }
    if (req.method !== 'POST' || req.url !== '/alerts') {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', () => {
      try {
        const d = JSON.parse(Buffer.concat(chunks).toString('utf8')) as AlertDelivery;
        r.deliveries.push(d);
        onAlert(d);
      } catch {
        // not a notification: answered all the same
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  r.webhookUrl = `http://127.0.0.1:${port}/alerts`;
  r.llmApiUrl = `http://127.0.0.1:${port}/llm`;
  return r;
}
