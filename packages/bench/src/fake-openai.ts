/**
 * A minimal fake OpenAI Responses API for the `adapters` workload (the tests have a fuller one,
 * test/harness/fake-openai.ts): `POST /v1/responses` answers an assistant message by server-sent
 * events, or — while `hangNext` is set — sends the headers and then nothing. Records when each
 * request arrived, so a workload can time a resumed request.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface BenchFakeOpenAI {
  baseUrl: string;
  /** Arrival time (epoch ms) and the input texts of every request. */
  readonly requests: { at: number; texts: string[] }[];
  /** Hang the next `n` requests (headers, then silence until the client goes away). */
  hangNext(n: number): void;
  close(): Promise<void>;
}

export async function startBenchFakeOpenAI(): Promise<BenchFakeOpenAI> {
  const requests: { at: number; texts: string[] }[] = [];
  const sockets = new Set<Socket>();
  const open = new Set<ServerResponse>();
  let hangs = 0;
  let n = 0;
  const server = createServer((req, res) => {
    const at = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ at, texts: texts(Buffer.concat(chunks).toString('utf8')) });
      if (req.method !== 'POST' || !req.url?.startsWith('/v1/responses')) {
        res.writeHead(404).end();
        return;
      }
      const id = `resp_bench_${++n}`;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      send(res, 'response.created', { response: { id } });
      if (hangs > 0) {
        hangs--;
        open.add(res);
        res.on('close', () => open.delete(res));
        return;
      }
      send(res, 'response.output_item.done', {
        item: {
          type: 'message',
          role: 'assistant',
          id: `msg_${id}`,
          content: [{ type: 'output_text', text: 'ok' }],
        },
      });
      send(res, 'response.completed', {
        response: { id, usage: { input_tokens: 100, output_tokens: 10, total_tokens: 110 } },
      });
      res.end();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    hangNext: (count) => {
      hangs = count;
    },
    close: async () => {
      for (const r of open) r.destroy();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function send(res: ServerResponse, event: string, data: Record<string, unknown>): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
}

/** The texts of a request's `input` items (to recognise a nudge). */
function texts(raw: string): string[] {
  try {
    const body = JSON.parse(raw) as { input?: { content?: { text?: unknown }[] }[] };
    return (body.input ?? []).flatMap((i) =>
      (i.content ?? []).map((c) => c.text).filter((t): t is string => typeof t === 'string'),
    );
  } catch {
    return [];
  }
}
