/**
 * Child-process entry point for the `fleet-floor` workload: the least a coordinator could be. A bare
 * `node:http` server that answers the fleet agents' registrations and heartbeats (parsing each body
 * as JSON) and spends a fixed `workUs` of CPU on every heartbeat, in one piece, before it answers.
 * No store, no validation, no batching: what the fleet's clients and this machine allow at a given
 * cost per beat.
 *
 * With `batchMs` it answers the way a coordinator with a group commit does: half of `workUs` when
 * the beat arrives, the other half in a batch with the beats of the next `batchMs` (one timer from the
 * batch's first beat), each answered in turn once its half is done.
 *
 * argv[2]: JSON `{workUs, batchMs?}`. stdout: `{type: 'listening', url}` once it listens on a
 * loopback port. stdin: `stop`.
 */
import { createServer, type ServerResponse } from 'node:http';
import { createInterface } from 'node:readline';

const config = JSON.parse(process.argv[2] ?? '{}') as { workUs?: number; batchMs?: number };
const workUs = config.workUs ?? 0;
const batchMs = config.batchMs ?? 0;
const BEAT_ANSWER = JSON.stringify({ heartbeatIntervalMs: 5000, tasks: [], commands: [] });

/** Keep the CPU busy for `us` microseconds (a stand-in for a coordinator's work on one beat). */
function spin(us: number): void {
  const end = performance.now() + us / 1000;
  while (performance.now() < end) {
    // busy on purpose
  }
}

let registered = 0;
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    try {
      JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (req.method === 'POST' && req.url === '/v1/agents') {
      const id = `agt_floor_${++registered}`;
      res.statusCode = 201;
      send(res, JSON.stringify({ agent: { id }, token: `token-${id}` }));
    } else if (batchMs > 0) {
      spin(workUs / 2);
      batch.push(res);
      if (batch.length === 1) setTimeout(flush, batchMs);
    } else {
      spin(workUs);
      send(res, BEAT_ANSWER);
    }
  });
});

function send(res: ServerResponse, answer: string): void {
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(answer));
  res.end(answer);
}

/** The beats waiting for the batch timer. */
let batch: ServerResponse[] = [];
function flush(): void {
  const beats = batch;
  batch = [];
  for (const res of beats) {
    spin(workUs / 2);
    send(res, BEAT_ANSWER);
  }
}
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ type: 'listening', url: `http://127.0.0.1:${port}` })}\n`);
});

const commands = createInterface({ input: process.stdin });
commands.on('close', () => process.exit(0));
commands.on('line', (line) => {
  if (line.trim() === 'stop') server.close(() => process.exit(0));
});
