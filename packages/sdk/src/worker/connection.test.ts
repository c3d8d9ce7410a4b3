import { describe, expect, it, onTestFinished } from 'vitest';
import { RouseApiError, RouseNetworkError, RouseSdkError } from '../errors.js';
import { FakeCoordinator } from '../test-support/fake-coordinator.js';
import { createTestWorker, freePort, nextEvent, startHarness, within } from '../test-support/harness.js';
import { recordingLogger } from '../test-support/recording-logger.js';
import { TcpProxy } from '../test-support/tcp-proxy.js';

const isClaim = (line: string): boolean => /^POST \/v1\/agents\/[^/]+\/claim /.test(line);

describe('the worker and its connection', () => {
  it('waits for a coordinator that is not up yet, logging each wait, and registers once it is', async () => {
    const port = await freePort();
    const log = recordingLogger();
    const worker = await createTestWorker(`http://127.0.0.1:${port}`, {
      handler: async () => null,
      logger: log.logger,
      startTimeoutMs: 30_000,
    });
    const started = worker.start();
    const waiting = await within(10_000, log.waitFor(/^waiting for the coordinator/), 'a waiting line');
    expect(waiting.level).toBe('warn');
    expect(waiting.msg).toMatch(
      new RegExp(
        `^waiting for the coordinator at http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\), retrying in \\d+(\\.\\d)? s$`,
      ),
    );
    const fake = await new FakeCoordinator().listen(port);
    onTestFinished(() => fake.close());
    await within(15_000, started, 'start() once the coordinator is up');
    expect(worker.agentId).toBe('agt_1');
    expect(fake.registrations).toHaveLength(1);
  });

  it('fails at once with startTimeoutMs 0 or a refused token, after the timeout otherwise, and when stopped', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const log = recordingLogger();
    const now = await createTestWorker(url, {
      handler: async () => null,
      logger: log.logger,
      startTimeoutMs: 0,
    });
    const err = await now.start().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RouseNetworkError);
    expect(err).toMatchObject({ code: 'start_timeout' });
    expect((err as Error).message).toMatch(
      new RegExp(`^could not register with the coordinator at ${url}: ECONNREFUSED\\. Is it running`),
    );
    expect(log.messages().filter((m) => m.startsWith('waiting'))).toEqual([]);

    const soon = await createTestWorker(url, { handler: async () => null, startTimeoutMs: 1500 });
    await expect(soon.start()).rejects.toThrow(/within 1\.5 s \(startTimeoutMs\): ECONNREFUSED/);

    // stop() during the wait ends it
    const stopped = await createTestWorker(url, { handler: async () => null, startTimeoutMs: 60_000 });
    const starting = stopped.start();
    await stopped.stop();
    await expect(starting).rejects.toMatchObject({ code: 'stopped' });
    expect(await starting.catch((e: unknown) => e)).toBeInstanceOf(RouseSdkError);

    // a coordinator that answers "no" is not waited for
    const fake = await new FakeCoordinator().listen(port);
    onTestFinished(() => fake.close());
    fake.enrollToken = 'the-right-one';
    const refused = await createTestWorker(url, { handler: async () => null, startTimeoutMs: 60_000 });
    const denied = await within(
      5000,
      refused.start().catch((e: unknown) => e),
      'a refused registration',
    );
    expect(denied).toBeInstanceOf(RouseApiError);
    expect(denied).toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it('logs a lost connection once and its recovery once, and claims again when it is back', async () => {
    const log = recordingLogger();
    const { fake, worker } = await startHarness({
      handler: async () => 'done',
      logger: log.logger,
      heartbeatIntervalMs: 30,
    });
    let heartbeatErrors = 0;
    let enough: () => void = () => {};
    const fiveFailed = new Promise<void>((resolve) => {
      enough = resolve;
    });
    worker.on('error', ({ op }) => {
      if (op === 'heartbeat' && ++heartbeatErrors === 5) enough();
    });
    const disconnected = nextEvent(worker, 'disconnected');
    const port = fake.port;
    await fake.close();
    const [{ error }] = await within(10_000, disconnected, 'disconnected');
    expect(error).toBeInstanceOf(RouseNetworkError);
    await within(10_000, fiveFailed, 'five failed heartbeats');
    const reconnected = nextEvent(worker, 'reconnected');
    await fake.listen(port);
    const [{ downMs }] = await within(10_000, reconnected, 'reconnected');
    expect(downMs).toBeGreaterThan(0);
    const task = fake.addTask();
    await within(
      10_000,
      fake.waitUntil(() => fake.completed.has(task.id)),
      'the task completed',
    );

    const lost = log.lines.filter((l) => l.msg?.startsWith('lost the connection'));
    const back = log.lines.filter((l) => l.msg?.includes('is back after'));
    expect(lost.map((l) => l.level)).toEqual(['warn']);
    expect(lost[0]!.msg).toMatch(
      new RegExp(`^lost the connection to the coordinator at http://127\\.0\\.0\\.1:${port} \\(`),
    );
    expect(back.map((l) => l.level)).toEqual(['info']);
    // each failed request is logged at debug only
    expect(log.lines.filter((l) => l.level === 'warn' && /heartbeat|claim/.test(l.msg ?? ''))).toEqual([]);
    expect(
      log.lines.filter((l) => l.level === 'debug' && l.msg === 'worker heartbeat failed').length,
    ).toBeGreaterThanOrEqual(5);
  });

  it('notices a silently dead connection within seconds (aborting its long-poll) and claims again soon after it heals', async () => {
    const fake = await new FakeCoordinator().listen();
    onTestFinished(() => fake.close());
    const proxy = await new TcpProxy(fake.port).listen();
    onTestFinished(() => proxy.close());
    const worker = await createTestWorker(proxy.url, {
      handler: async () => 'done',
      heartbeatIntervalMs: 200, // heartbeat request timeout: 1 s
      waitMs: 3000,
      requestTimeoutMs: 30_000, // before: a claim hung for waitMs + 30 s, a heartbeat for 30 s per try
    });
    await worker.start();
    // a long-poll claim is waiting on the coordinator
    const claim = await within(
      5000,
      fake.waitForRequest((r) => r.path.endsWith('/claim')),
      'a claim',
    );
    const claimAnswered = new Promise<void>((resolve) => {
      const on = (r: unknown): void => {
        if (r === claim) {
          fake.off('handled', on);
          resolve();
        }
      };
      fake.on('handled', on);
    });
    await within(
      5000,
      fake.waitUntil(() => fake.agentBeats().length >= 1),
      'a heartbeat',
    );
    const claimPair = proxy.pairs.find((p) => isClaim(p.lastRequest) && p.clientClosedAt === undefined);
    expect(claimPair).toBeDefined();

    const disconnected = nextEvent(worker, 'disconnected');
    const partitionedAt = performance.now();
    proxy.partition();
    await within(5000, disconnected, 'the worker noticing the partition');
    const noticedMs = performance.now() - partitionedAt;
    // the long-poll on the dead connection was aborted, its socket destroyed
    await within(
      5000,
      new Promise<void>((resolve) => {
        const check = setInterval(() => {
          if (claimPair!.clientClosedAt !== undefined) {
            clearInterval(check);
            resolve();
          }
        }, 20);
        onTestFinished(() => clearInterval(check));
      }),
      'the long-poll claim aborted',
    );
    expect(claimPair!.clientClosedAt! - partitionedAt).toBeLessThan(5000);
    // The coordinator cannot tell that connection is dead: until its wait ends, it would hand a new task
    // to it (lost until the claim times out) — as a real one would. Heal once it has answered.
    await within(10_000, claimAnswered, 'the coordinator ending the stale long-poll');

    const reconnected = nextEvent(worker, 'reconnected');
    const healedAt = performance.now();
    proxy.heal();
    const task = fake.addTask();
    await within(5000, reconnected, 'the worker noticing the network is back');
    await within(
      5000,
      fake.waitUntil(() => fake.completed.has(task.id)),
      'a task claimed after the heal',
    );
    const resumedMs = performance.now() - healedAt;
    expect(noticedMs).toBeLessThan(5000);
    expect(resumedMs).toBeLessThan(5000);
  });
});
