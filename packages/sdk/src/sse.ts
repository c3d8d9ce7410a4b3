/**
 * A reader for server-sent events (the `text/event-stream` format): yields the `data` of each event,
 * joined across `data:` lines. Comments (`: keep-alive`) and other fields are skipped.
 */
import { RouseNetworkError, RouseSdkError } from './errors.js';
import type { OpenStream } from './transport.js';

/**
 * Yield each event's data parsed as JSON, until the server closes the stream or `signal` aborts
 * (then the iteration simply ends). A connection that breaks under the stream is a
 * `RouseNetworkError`.
 */
export async function* readSseJson<T>(
  stream: OpenStream,
  signal: AbortSignal | undefined,
): AsyncGenerator<T> {
  const reader = stream.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  try {
    for (;;) {
      const chunk = await reader.read().catch((err: unknown) => {
        if (signal?.aborted) return { done: true as const, value: undefined };
        throw streamCut(err);
      });
      if (chunk.done) return;
      buffer += decoder.decode(chunk.value, { stream: true });
      let newline = buffer.indexOf('\n');
      while (newline !== -1) {
        let line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line.endsWith('\r')) line = line.slice(0, -1);
        if (line === '') {
          if (data.length > 0) {
            const text = data.join('\n');
            data = [];
            yield parse<T>(text);
          }
        } else if (line.startsWith('data:')) {
          data.push(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5));
        }
        newline = buffer.indexOf('\n');
      }
    }
  } finally {
    stream.release();
    reader.cancel().catch(() => {});
  }
}

/** The connection under an open stream broke (the coordinator went away): a network error. */
function streamCut(err: unknown): RouseNetworkError {
  type Coded = { code?: unknown; message?: unknown; cause?: Coded };
  const e = err as Coded | undefined;
  const code =
    typeof e?.cause?.code === 'string' ? e.cause.code : typeof e?.code === 'string' ? e.code : 'ECONNRESET';
  const detail = typeof e?.message === 'string' && e.message ? e.message : String(err);
  const message = `the event stream from the coordinator was cut off (${detail}); is the coordinator reachable?`;
  return new RouseNetworkError(message, { code, cause: err });
}

function parse<T>(text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new RouseSdkError(`an event stream sent data that is not JSON: ${text.slice(0, 100)}`, {
      code: 'bad_response',
      cause: err,
    });
  }
}
