/**
 * A fake OpenAI Responses API on 127.0.0.1 for the real `codex exec` to talk to: `POST /v1/responses`
 * answered with server-sent events, as the Codex CLI expects them (see docs/adapters.md, Codex).
 *
 * Each test scripts the model as a queue of behaviours, one consumed per request:
 * - `answer`: an assistant message, then `response.completed` with usage;
 * - `tool`: a `function_call` to `exec_command` with a shell command; the CLI runs it and sends its
 *   output in the next request, which the next behaviour in the queue answers;
 * - `hang`: headers and the first events, then silence until `releaseHangs()`, `close()`, the client
 *   going away, or a bound (`hangLimitMs`) — never forever;
 * - `status`: a plain HTTP error (429 with `Retry-After`, 5xx, 401…), `times` requests in a row.
 * When the queue is empty, `fallback` answers (by default a plain answer "done").
 *
 * Every request body is recorded, so a test can assert what the CLI sent (the earlier conversation of
 * a resumed session, a wake's nudge).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface FakeUsage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens?: number;
}

export type FakeTurn =
  | { kind: 'answer'; text: string; usage?: FakeUsage }
  | { kind: 'tool'; command: string; text?: string; usage?: FakeUsage }
  | { kind: 'hang'; text?: string }
  | { kind: 'status'; status: number; retryAfterSec?: number; message?: string; times?: number };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (or the raw text when it is not JSON). */
  body: unknown;
  /** Which behaviour answered it. */
  answeredWith: FakeTurn['kind'];
}

export interface FakeOpenAI {
  /** `http://127.0.0.1:PORT/v1`: the provider `base_url` for Codex. */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Append behaviours to the queue. */
  script(...turns: FakeTurn[]): void;
  /** What answers when the queue is empty. */
  setFallback(turn: FakeTurn): void;
  /** How many hung responses are open now. */
  hanging(): number;
  /** End every hung response (the connection is closed without `response.completed`). */
  releaseHangs(): void;
  /** Every text the CLI sent as input over all requests (user messages, tool outputs). */
  inputTexts(request: RecordedRequest): string[];
  close(): Promise<void>;
}

const DEFAULT_USAGE: FakeUsage = { inputTokens: 100, outputTokens: 20, cachedInputTokens: 0 };
const MAX_BODY = 32 * 1024 * 1024;
const MAX_RECORDED = 1000;

export async function startFakeOpenAI(options: { hangLimitMs?: number } = {}): Promise<FakeOpenAI> {
  const hangLimitMs = options.hangLimitMs ?? 120_000;
  const queue: FakeTurn[] = [];
  let fallback: FakeTurn = { kind: 'answer', text: 'done' };
  const requests: RecordedRequest[] = [];
  const hangs = new Set<ServerResponse>();
  const sockets = new Set<Socket>();

  const next = (): FakeTurn => {
    const head = queue[0];
    if (!head) return fallback;
    if (head.kind === 'status' && (head.times ?? 1) > 1) {
      queue[0] = { ...head, times: (head.times ?? 1) - 1 };
      return head;
    }
    queue.shift();
    return head;
  };

  const server: Server = createServer((req, res) => {
    readBody(req)
      .then((raw) => {
        if (req.method !== 'POST' || !req.url?.startsWith('/v1/responses')) {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({ error: { message: `no route ${req.method} ${req.url}`, type: 'not_found' } }),
          );
          return;
        }
        const turn = next();
        if (requests.length < MAX_RECORDED) {
          requests.push({
            method: req.method,
            path: req.url,
            headers: { ...req.headers },
            body: parseJson(raw),
            answeredWith: turn.kind,
          });
        }
        answer(turn, res);
      })
      .catch(() => {
        if (!res.headersSent) res.writeHead(413);
        res.end();
      });
  });

  const answer = (turn: FakeTurn, res: ServerResponse): void => {
    if (turn.kind === 'status') {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (turn.retryAfterSec !== undefined) headers['retry-after'] = String(turn.retryAfterSec);
      res.writeHead(turn.status, headers);
      res.end(
        JSON.stringify({
          error: {
            message: turn.message ?? `fake status ${turn.status}`,
            type: turn.status === 429 ? 'rate_limit_exceeded' : 'server_error',
            code: turn.status === 429 ? 'rate_limit_exceeded' : null,
          },
        }),
      );
      return;
    }
    const responseId = `resp_${randomUUID().replaceAll('-', '')}`;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    send(res, 'response.created', { response: { id: responseId } });
    if (turn.kind === 'hang') {
      if (turn.text) send(res, 'response.output_text.delta', { delta: turn.text });
      hangs.add(res);
      const bound = setTimeout(() => res.destroy(), hangLimitMs);
      bound.unref();
      res.on('close', () => {
        clearTimeout(bound);
        hangs.delete(res);
      });
      return;
    }
    if (turn.kind === 'tool') {
      const callId = `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
      send(res, 'response.output_item.done', {
        item: {
          type: 'function_call',
          id: `fc_${callId}`,
          call_id: callId,
          name: 'exec_command',
          arguments: JSON.stringify({ cmd: turn.command }),
        },
      });
    } else {
      send(res, 'response.output_item.done', {
        item: {
          type: 'message',
          role: 'assistant',
          id: `msg_${responseId}`,
          content: [{ type: 'output_text', text: turn.text }],
        },
      });
    }
    const u = turn.usage ?? DEFAULT_USAGE;
    send(res, 'response.completed', {
      response: {
        id: responseId,
        usage: {
          input_tokens: u.inputTokens,
          input_tokens_details: { cached_tokens: u.cachedInputTokens ?? 0 },
          output_tokens: u.outputTokens,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: u.inputTokens + u.outputTokens,
        },
      },
    });
    res.end();
  };

  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    script: (...turns) => {
      queue.push(...turns);
    },
    setFallback: (turn) => {
      fallback = turn;
    },
    hanging: () => hangs.size,
    releaseHangs: () => {
      for (const h of [...hangs]) h.destroy();
    },
    inputTexts,
    close: async () => {
      queue.length = 0;
      for (const h of [...hangs]) h.destroy();
      for (const s of [...sockets]) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The texts in a request's `input`: user/developer messages and tool outputs, in order. */
export function inputTexts(request: RecordedRequest): string[] {
  const body = request.body as { input?: unknown } | null;
  const input = Array.isArray(body?.input) ? body.input : [];
  const out: string[] = [];
  for (const item of input as Record<string, unknown>[]) {
    if (item.type === 'function_call_output' && typeof item.output === 'string') out.push(item.output);
    else if (item.type === 'function_call' && typeof item.arguments === 'string') out.push(item.arguments);
    else if (Array.isArray(item.content)) {
      for (const c of item.content as Record<string, unknown>[]) {
        if (typeof c.text === 'string') out.push(c.text);
      }
    }
  }
  return out;
}

function send(res: ServerResponse, event: string, data: Record<string, unknown>): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error('body too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
