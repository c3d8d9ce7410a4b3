/** Shared set-up of the SDK tests: a fake coordinator, a worker against it, cleanup when the test ends. */
import { mkdtemp, rm } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import type { WorkerEvents } from '../worker/events.js';
import type { WorkerOptions } from '../worker/options.js';
import { Worker } from '../worker/worker.js';
import { type FakeCoordinator, startFakeCoordinator } from './fake-coordinator.js';

export type TestWorkerOptions = Partial<WorkerOptions> & Pick<WorkerOptions, 'handler'>;

/** A fake coordinator and a started worker with fast, quiet test settings; both cleaned up after the test. */
export async function startHarness(
  options: TestWorkerOptions,
  setup?: (fake: FakeCoordinator, worker: Worker) => void,
): Promise<{ fake: FakeCoordinator; worker: Worker; spoolDir: string }> {
  const fake = await startFakeCoordinator();
  onTestFinished(() => fake.close());
  const worker = await createTestWorker(fake.url, options);
  setup?.(fake, worker);
  await worker.start();
  return { fake, worker, spoolDir: worker.options.spoolDir };
}

/**
 * A worker (not started) with fast, quiet test settings against `url`, stopped and its spool removed
 * when the test ends.
 */
export async function createTestWorker(url: string, options: TestWorkerOptions): Promise<Worker> {
  const spoolDir = await mkdtemp(join(tmpdir(), 'rouse-sdk-test-'));
  const worker = new Worker({
    url,
    token: 'enroll-token',
    agentType: 'test-agent',
    taskTypes: ['test'],
    shutdownSignals: false,
    shutdownGraceMs: 2000,
    waitMs: 5000,
    spoolDir,
    retry: { attempts: 2, baseDelayMs: 5, maxDelayMs: 20 },
    requestTimeoutMs: 5000,
    ...options,
  });
  onTestFinished(async () => {
    await worker.stop({ graceful: false });
    await rm(spoolDir, { recursive: true, force: true });
    await rm(worker.options.spoolDir, { recursive: true, force: true });
  });
  return worker;
}

/** A promise with its resolve function, for handlers that wait on the test. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * The next `event` of the worker. Unlike `events.once`, an `error` event (which the worker emits for
 * problems it handles itself) does not reject the wait.
 */
export function nextEvent<K extends keyof WorkerEvents>(worker: Worker, event: K): Promise<WorkerEvents[K]> {
  return new Promise((resolve) => {
    (worker.once as (e: string, l: (...a: unknown[]) => void) => Worker)(event, (...args) =>
      resolve(args as WorkerEvents[K]),
    );
  });
}

/** `promise`, or a rejection naming `what` when it takes longer than `ms` (a bounded wait). */
export async function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A port on 127.0.0.1 that nothing listens on (yet). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
