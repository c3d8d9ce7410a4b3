/**
 * Durations on the command line take their unit: every duration flag of every command refuses a bare
 * number (exit 2, naming the flag and showing the fix) and a value below its least, and what `rouse
 * submit` sends is the duration that was written. Real `rouse` child processes; submit talks to a stub
 * HTTP server that records the request.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CreateTaskRequest } from '@rouse/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './run-cli.js';

let dir: string;
let stub: Server;
let stubUrl: string;
const bodies: CreateTaskRequest[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rouse-durations-'));
  stub = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/tasks') {
        // Anything else (the SDK asking for a call stream first) is not this stub's.
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'not_found', message: 'stub', details: {} } }));
        return;
      }
      const task = JSON.parse(body) as CreateTaskRequest;
      bodies.push(task);
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ task: { id: 'tsk_stub', type: task.type, status: 'created' } }));
    });
  });
  await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
  stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => stub.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

describe('duration flags', () => {
  it('submit sends the durations as written, in milliseconds', async () => {
    const before = Date.now();
    const r = await runCli(
      [
        'submit',
        'report',
        '--heartbeat-interval',
        '1.5s',
        '--execution-timeout',
        '10m',
        '--expected-duration',
        '500ms..2h',
        '--run-at',
        '+1h',
        '--json',
        '--url',
        stubUrl,
        '--token',
        'stub-token',
      ],
      { cwd: dir },
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const sent = bodies.at(-1);
    expect(sent?.timing).toEqual({
      heartbeatIntervalMs: 1500,
      executionTimeoutMs: 600_000,
      expectedDurationMs: { min: 500, max: 7_200_000 },
    });
    expect(sent?.runAt).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(sent?.runAt).toBeLessThan(Date.now() + 3_600_000);
  });

  describe.concurrent('refuse what cannot be meant (exit 2)', () => {
    it.each([
      [
        ['submit', 'x', '--heartbeat-interval', '5'],
        '--heartbeat-interval: "5" has no unit; write 5s (or 5000ms)',
      ],
      [['submit', 'x', '--heartbeat-interval', '50ms'], '--heartbeat-interval: must be at least 100ms'],
      [
        ['submit', 'x', '--execution-timeout', '600'],
        '--execution-timeout: "600" has no unit; write 600ms (or 0.6s)',
      ],
      [['submit', 'x', '--expected-duration', '5..300'], '--expected-duration: "5" has no unit'],
      [['submit', 'x', '--run-at', '+30'], '--run-at: "+30" has no unit; write +30s (or +30000ms)'],
      [['serve', '--store-wait', '5'], '--store-wait: "5" has no unit'],
      [['serve', '--shard-lease-ttl', '2'], '--shard-lease-ttl: "2" has no unit; write 2s (or 2000ms)'],
      [['serve', '--statement-timeout', '0s'], '--statement-timeout: must be greater than 0'],
      [['migrate', '--connect-timeout', '5'], '--connect-timeout: "5" has no unit'],
      [['demo', '--duration', '60'], '--duration: "60" has no unit; write 60s (or 60000ms)'],
      [['demo', '--heartbeat-interval', '10ms'], '--heartbeat-interval: must be at least 100ms'],
    ])('rouse %j', async (args, message) => {
      const r = await runCli(args, { cwd: dir });
      expect(r.stderr).toContain(`error: ${message}`);
      expect(r.code).toBe(2);
    });
  });

  it('rouse demo --help shows its defaults as durations', async () => {
    const r = await runCli(['demo', '--help'], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /--duration <duration>\s+stop after this long at most \(default: 60s;\s+90s for --act watchdog\)/,
    );
    expect(r.stdout).toMatch(/heartbeat interval of the demo tasks\s+\(tasks\s+act\)\s+\(default:\s+500ms\)/);
    expect(r.stdout).not.toMatch(/default: \d{3,}\)/); // no raw milliseconds
  });
});
