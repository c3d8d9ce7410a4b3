/**
 * A minimal reader of the coordinator's live event stream (`GET /v1/events`, server-sent events) for
 * the bench: it hands every event (the parsed `data:` of a frame) to a listener. Used where only the
 * stream says when something happened on the coordinator (an `agent.condition` event's `at`).
 */
import http from 'node:http';
import type { StreamEvent } from '@rouse/protocol';

export interface EventStream {
  /** Stop reading and close the connection. */
  close(): void;
  /** Why the stream ended on its own (the coordinator closed it), or null while it is open. */
  readonly endedBecause: string | null;
}

/** Open the stream; resolves once the coordinator answered with the stream's headers. */
export function openEventStream(
  url: string,
  token: string,
  onEvent: (event: StreamEvent) => void,
  timeoutMs = 10_000,
): Promise<EventStream> {
  const u = new URL('/v1/events', url);
  return new Promise((resolve, reject) => {
    let endedBecause: string | null = null;
    const req = http.request(
      {
        host: u.hostname,
        port: Number(u.port || 80),
        path: u.pathname,
        method: 'GET',
        headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      },
      (res) => {
        clearTimeout(timer);
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`GET /v1/events → ${res.statusCode}`));
          return;
        }
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let end = buffer.indexOf('\n\n');
          while (end >= 0) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = frame
              .split('\n')
              .filter((l) => l.startsWith('data:'))
              .map((l) => l.slice(5).trimStart())
              .join('\n');
            if (data) onEvent(JSON.parse(data) as StreamEvent);
            end = buffer.indexOf('\n\n');
          }
        });
        res.on('end', () => {
          endedBecause ??= 'the coordinator ended the stream';
        });
        res.on('error', (err) => {
          endedBecause ??= String(err);
        });
        resolve({
          close: () => req.destroy(),
          get endedBecause() {
            return endedBecause;
          },
        });
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`GET /v1/events did not answer within ${timeoutMs} ms`));
    }, timeoutMs);
    req.on('error', (err) => {
      clearTimeout(timer);
      endedBecause ??= String(err);
      reject(err);
    });
    req.end();
  });
}
