/**
 * Issue 10, test 9 — effect keys with real processes: an attempt SIGKILLed after its `ctx.once`
 * effect ran and before it completed; the next attempt, in another process, receives the recorded
 * result and the effect has run exactly once. Two calls racing on one key run it once.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@rouse/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { type CoordinatorProcess, startCoordinatorProcess } from '../harness/coordinator-process.js';
import { tempDir } from '../harness/temp-dir.js';
import { waitFor } from '../harness/wait.js';
import { startWorkerProcess, type WorkerProcess } from '../harness/worker-process.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function coordinator(): Promise<{ coord: CoordinatorProcess; admin: Client }> {
  const coord = await startCoordinatorProcess();
  cleanups.push(() => coord.kill('SIGTERM'));
  return { coord, admin: new Client({ url: coord.url, token: coord.adminToken }) };
}

function worker(coord: CoordinatorProcess, name: string): WorkerProcess {
  const w = startWorkerProcess(coord, { name, types: ['effects'], heartbeatMs: 200 });
  cleanups.push(async () => {
    w.kill('SIGKILL');
    await w.exited;
  });
  return w;
}

const ranLines = (file: string): string[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0);

describe('effect keys across processes', () => {
  it('an attempt killed after its effect ran: the next attempt, elsewhere, gets the recorded result', async () => {
    const { coord, admin } = await coordinator();
    const effectFile = join(tempDir('rouse-effects-'), 'ran.txt');
    const first = worker(coord, 'first');
    await first.waitFor('started');
    const { task } = await admin.createTask({
      type: 'effects',
      payload: { mode: 'once', key: 'send-invoice', effectFile, hangAfterEffect: true },
      maxAttempts: 3,
      timing: { heartbeatIntervalMs: 200, timeoutFactor: 3 },
    });
    const done = await first.waitFor('effectDone', task.id);
    expect(ranLines(effectFile)).toEqual([`${first.proc.pid} 1`]);
    first.kill('SIGKILL');
    await first.exited;

    const second = worker(coord, 'second');
    await second.waitFor('completed', task.id, 20_000);
    const finished = await waitFor(
      async () => {
        const t = await admin.getTask(task.id);
        return t.status === 'completed' ? t : null;
      },
      { what: 'the task to complete', timeoutMs: 10_000 },
    );
    expect(finished.attempt).toBe(2);
    // The second attempt was handed what the first one's effect returned; the effect ran once.
    expect(finished.result).toEqual({ results: done.results, attempt: 2 });
    expect(done.results).toEqual([{ sentBy: first.proc.pid, attempt: 1 }]);
    expect(ranLines(effectFile)).toEqual([`${first.proc.pid} 1`]);
  });

  it('two calls racing on one key run the effect once and both get its result', async () => {
    const { coord, admin } = await coordinator();
    const effectFile = join(tempDir('rouse-effects-'), 'ran.txt');
    const w = worker(coord, 'racer');
    await w.waitFor('started');
    const { task } = await admin.createTask({
      type: 'effects',
      payload: { mode: 'once', key: 'charge', effectFile, race: true },
    });
    const line = await w.waitFor('effectDone', task.id);
    const results = line.results as unknown[];
    expect(results).toHaveLength(2);
    expect(results[0]).toEqual(results[1]);
    expect(ranLines(effectFile)).toHaveLength(1);
  });
});
