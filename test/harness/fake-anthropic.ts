/**
 * A fake Anthropic Messages API on 127.0.0.1 that the real Claude Code (`claude -p`) talks to, for
 * the adapter tests. Point the CLI at it with `ANTHROPIC_BASE_URL=<fake.url>` and any
 * `ANTHROPIC_API_KEY`.
 *
 * What the CLI calls (measured on 2.1.197): `HEAD /` (any answer), then `POST /v1/messages?beta=true`
 * with `stream: true` and the whole conversation in `messages`; after a stream that stalls it retries
 * the same request without streaming, so every turn can also be answered as plain JSON.
 *
 * Each test scripts a queue of turns; every model request takes the next one (an `error` turn stays at
 * the head for `times` requests). When the queue is empty the fake answers `fallback`. Every request
 * is recorded (bounded), so a test can assert that a resumed session sent the earlier conversation or
 * that a wake's nudge arrived.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface FakeUsage {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheCreation?: number;
}

export type FakeTurn =
  /** A plain assistant answer that ends the turn. */
  | { kind: 'answer'; text: string; usage?: FakeUsage }
  /**
   * A `Bash` tool_use (e.g. a command writing a file in the cwd); the CLI runs it and sends its
   * tool_result with the next request, which takes the next turn of the queue.
   */
  | { kind: 'bash'; command: string; text?: string; usage?: FakeUsage }
  /**
   * Headers, `message_start` and (if given) the start of a text, then silence until `release()`
   * (which finishes the message with `releasedText`) or until the client closes the connection.
   */
  | { kind: 'hang'; text?: string; releasedText?: string; usage?: FakeUsage }
  /**
   * An HTTP error (`429` rate limit, `529` overloaded, `500`, `401`…) with the API's error body, for
   * `times` requests in a row (default 1), then the next turn.
   */
  | { kind: 'error'; status: number; retryAfterS?: number; times?: number; message?: string };

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body (null for HEAD/GET or a body that is not JSON). */
  body: MessagesBody | null;
  /** What the fake answered: the turn's kind, or `head` / `fallback` / `not_found`. */
  served: string;
}

export interface MessagesBody {
  model?: string;
  stream?: boolean;
  messages?: { role: string; content: unknown }[];
  [key: string]: unknown;
}

export interface FakeAnthropic {
  /** The base URL for `ANTHROPIC_BASE_URL` (`http://127.0.0.1:PORT`). */
  url: string;
  /** Append turns to the queue. */
  script(...turns: FakeTurn[]): void;
  /** What an empty queue answers. @default an `answer` "Done." */
  fallback: FakeTurn;
  /** Every request so far, oldest first (at most `maxRecorded`). */
  requests: RecordedRequest[];
  /** The model requests (`POST /v1/messages`) so far. */
  messageRequests(): MessagesBody[];
  /** True when some recorded model request's conversation contains `text`. */
  sawText(text: string): boolean;
  /** Streams hanging right now. */
  hanging(): number;
  /** Hung streams the client went away from while they still hung (an interrupted CLI drops its request). */
  abandoned(): number;
  /** Finish every hanging stream normally (with its `releasedText`). */
  release(): void;
  /** Turns still queued. */
  queued(): number;
  /** Drop an `error` turn at the head of the queue (however many `times` it had left): the API recovers. */
  recover(): void;
  /** The session ids Claude Code sent (`x-claude-code-session-id`), in the order first seen. */
  sessionIds(): string[];
  close(): Promise<void>;
}

const DEFAULT_USAGE: Required<FakeUsage> = { input: 100, output: 20, cacheRead: 0, cacheCreation: 0 };
const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export async function startFakeAnthropic(options: { maxRecorded?: number } = {}): Promise<FakeAnthropic> {
  const maxRecorded = options.maxRecorded ?? 500;
  const queue: FakeTurn[] = [];
  const errorServed = new WeakMap<FakeTurn, number>();
  const requests: RecordedRequest[] = [];
  const hung = new Set<() => void>();
  let abandoned = 0;
  const sockets = new Set<Socket>();
  let seq = 0;

  const record = (req: IncomingMessage, body: MessagesBody | null, served: string): void => {
    if (requests.length < maxRecorded) {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, served });
    }
  };

  const nextTurn = (): { turn: FakeTurn; label: string } => {
    const head = queue[0];
    if (!head) return { turn: fake.fallback, label: 'fallback' };
    if (head.kind === 'error') {
      const n = (errorServed.get(head) ?? 0) + 1;
      errorServed.set(head, n);
      if (n >= (head.times ?? 1)) queue.shift();
    } else {
      queue.shift();
    }
    return { turn: head, label: head.kind };
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        res.writeHead(413).end();
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (req.method !== 'POST') {
        record(req, null, 'head');
        res.writeHead(200).end();
        return;
      }
      let body: MessagesBody | null = null;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as MessagesBody;
      } catch {
        body = null;
      }
      if (!req.url?.startsWith('/v1/messages') || req.url.startsWith('/v1/messages/count_tokens')) {
        record(req, body, 'not_found');
        sendError(res, 404, 'not found');
        return;
      }
      const { turn, label } = nextTurn();
      record(req, body, label);
      seq += 1;
      serve(turn, body, `msg_fake_${seq}`, `toolu_fake_${seq}`, req, res);
    });
  });

  const serve = (
    turn: FakeTurn,
    body: MessagesBody | null,
    msgId: string,
    toolId: string,
    req: IncomingMessage,
    res: ServerResponse,
  ): void => {
    if (turn.kind === 'error') {
      const headers: Record<string, string> = {};
      if (turn.retryAfterS !== undefined) headers['retry-after'] = String(turn.retryAfterS);
      sendError(res, turn.status, turn.message ?? `fake ${turn.status}`, headers);
      return;
    }
    const model = body?.model ?? 'claude-fake';
    const usage = { ...DEFAULT_USAGE, ...turn.usage };
    const blocks: Block[] = [];
    if (turn.kind === 'answer') blocks.push({ type: 'text', text: turn.text });
    if (turn.kind === 'bash') {
      if (turn.text) blocks.push({ type: 'text', text: turn.text });
      blocks.push({
        type: 'tool_use',
        id: toolId,
        name: 'Bash',
        input: { command: turn.command, description: 'Run a command' },
      });
    }
    const stopReason = turn.kind === 'bash' ? 'tool_use' : 'end_turn';
    if (body?.stream !== true) {
      // The CLI's non-streaming retry: one JSON message (a hang turn answers it at once).
      const content = turn.kind === 'hang' ? [{ type: 'text', text: turn.releasedText ?? 'Done.' }] : blocks;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(message(msgId, model, content, stopReason, usage, usage.output)));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const ev = (type: string, data: Record<string, unknown>): void => {
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    };
    ev('message_start', { message: message(msgId, model, [], null, usage, 1) });
    const finish = (content: Block[]): void => {
      content.forEach((b, index) => {
        if (b.type === 'text') {
          ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
          ev('content_block_delta', { index, delta: { type: 'text_delta', text: b.text } });
        } else {
          ev('content_block_start', { index, content_block: { ...b, input: {} } });
          ev('content_block_delta', {
            index,
            delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) },
          });
        }
        ev('content_block_stop', { index });
      });
      ev('message_delta', {
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: usage.output },
      });
      ev('message_stop', {});
      res.end();
    };
    if (turn.kind !== 'hang') {
      finish(blocks);
      return;
    }
    // Hang: start a text block (if any) and go silent until released or the client goes away.
    if (turn.text) {
      ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: turn.text } });
    }
    const releaseIt = (): void => {
      hung.delete(releaseIt);
      if (turn.text) {
        ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: turn.releasedText ?? '' } });
        ev('content_block_stop', { index: 0 });
        ev('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: usage.output } });
        ev('message_stop', {});
        res.end();
      } else {
        finish([{ type: 'text', text: turn.releasedText ?? 'Done.' }]);
      }
    };
    hung.add(releaseIt);
    req.socket.once('close', () => {
      if (hung.delete(releaseIt)) abandoned++;
    });
  };

  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('fake Anthropic API has no port');

  const fake: FakeAnthropic = {
    url: `http://127.0.0.1:${address.port}`,
    fallback: { kind: 'answer', text: 'Done.' },
    requests,
    script: (...turns) => {
      queue.push(...turns);
    },
    messageRequests: () =>
      requests.filter((r) => r.method === 'POST' && r.body && r.served !== 'not_found').map((r) => r.body!),
    sawText: (text) => fake.messageRequests().some((b) => JSON.stringify(b.messages ?? []).includes(text)),
    hanging: () => hung.size,
    abandoned: () => abandoned,
    release: () => {
      for (const r of [...hung]) r();
    },
    queued: () => queue.length,
    recover: () => {
      if (queue[0]?.kind === 'error') queue.shift();
    },
    sessionIds: () => [
      ...new Set(
        requests
          .map((r) => r.headers['x-claude-code-session-id'])
          .filter((v): v is string => typeof v === 'string'),
      ),
    ],
    close: async () => {
      queue.length = 0;
      hung.clear();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

function message(
  id: string,
  model: string,
  content: unknown[],
  stopReason: string | null,
  usage: Required<FakeUsage>,
  outputTokens: number,
): Record<string, unknown> {
  return {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: {
      input_tokens: usage.input,
      output_tokens: outputTokens,
      cache_read_input_tokens: usage.cacheRead,
      cache_creation_input_tokens: usage.cacheCreation,
    },
  };
}

function sendError(
  res: ServerResponse,
  status: number,
  msg: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(
    JSON.stringify({ type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message: msg } }),
  );
}

/**
 * Claude Code settings (for `--settings <json>`) with a SessionEnd hook that does not return while
 * the CLI lives: the real CLI prints its result, then waits for the hook and does not exit — the
 * field's "printed its result and hangs". The hook touches `marker` when it starts. Claude Code runs
 * hooks in a process group of their own, so killing the CLI's group would not reach a plain `sleep`:
 * the hook watches its parent (the CLI) and ends with it.
 */
export function lingeringSettings(marker: string): string {
  const command = `touch '${marker}'; while kill -0 $PPID 2>/dev/null; do sleep 0.2; done`;
  return JSON.stringify({
    hooks: { SessionEnd: [{ hooks: [{ type: 'command', command, timeout: 3600 }] }] },
  });
}
