import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentHeartbeatRequest } from '@rouse/protocol';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startFakeCoordinator } from '../test-support/fake-coordinator.js';
import { deferred, nextEvent, startHarness } from '../test-support/harness.js';
import { Spool, type SpoolEntry } from './spool.js';

describe('spool', () => {
  it('spools a result the coordinator cannot take, beats executionDone for it, and delivers it when back', async () => {
    const release = deferred();
    const started = deferred();
    const { fake, worker, spoolDir } = await startHarness({
      heartbeatIntervalMs: 20,
      handler: async () => {
        started.resolve();
        await release.promise;
        return { answer: 42 };
      },
    });
    const errors: string[] = [];
    worker.on('error', ({ op }) => errors.push(op));
    const task = fake.addTask({ version: 4 });
    await started.promise;
    const port = fake.port;
    await fake.close();

    const spooled = nextEvent(worker, 'spooled');
    release.resolve();
    const [ev] = await spooled;
    expect(ev).toEqual({ taskId: task.id, version: 4, kind: 'complete' });
    expect(errors).toContain('complete');
    const files = (await readdir(spoolDir)).filter((f) => f.endsWith('.json'));
    expect(files).toEqual([`${task.id}.json`]);
    const entry = JSON.parse(await readFile(join(spoolDir, files[0]!), 'utf8')) as SpoolEntry;
    expect(entry).toMatchObject({
      kind: 'complete',
      taskId: task.id,
      version: 4,
      result: { answer: 42 },
      agentToken: 'agent-token-1',
    });

    // the coordinator comes back on the same port; claims still refused so the heartbeat is first
    const back = await startFakeCoordinator(port);
    onTestFinished(() => back.close());
    back.override = (r, res) => {
      if (!r.path.endsWith('/claim')) return false;
      res
        .writeHead(503, { 'content-type': 'application/json' })
        .end('{"error":{"code":"unavailable","message":"x"}}');
      return true;
    };
    const delivered = nextEvent(worker, 'spoolDelivered');
    const completed = nextEvent(worker, 'completed');
    const [d] = await delivered;
    expect(d).toEqual({ taskId: task.id, outcome: 'delivered' });
    expect(back.completed.get(task.id)).toEqual({ version: 4, result: { answer: 42 }, via: 'complete' });
    const beatIdx = back.requests.findIndex((r) => r.path.endsWith('/heartbeat'));
    const completeIdx = back.requests.findIndex((r) => r.path.endsWith('/complete'));
    expect(beatIdx).toBeGreaterThanOrEqual(0);
    expect(beatIdx).toBeLessThan(completeIdx);
    expect((back.requests[beatIdx]!.body as AgentHeartbeatRequest).tasks).toEqual([
      { taskId: task.id, version: 4, executionDone: true },
    ]);
    expect((await readdir(spoolDir)).filter((f) => f.endsWith('.json'))).toEqual([]);
    const [c] = await completed;
    expect(c.task.id).toBe(task.id);
  });

  it('delivers entries left by an earlier process at start, with their own token; stale ones are superseded', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rouse-spool-test-'));
    const old = (taskId: string, spooledAt: number): SpoolEntry => ({
      kind: 'complete',
      taskId,
      version: 2,
      result: { from: 'earlier' },
      agentToken: 'old-token',
      spooledAt,
    });
    await writeFile(join(dir, 'tsk_old.json'), JSON.stringify(old('tsk_old', 1)));
    await writeFile(join(dir, 'tsk_stale.json'), JSON.stringify(old('tsk_stale', 2)));
    const seen: unknown[] = [];
    const done = deferred();
    const { fake } = await startHarness({ handler: async () => null, spoolDir: dir }, (f, worker) => {
      f.acceptedTokens.add('old-token');
      f.stale.add('tsk_stale');
      worker.on('spoolDelivered', (e) => {
        seen.push(e);
        if (seen.length === 2) done.resolve();
      });
    });
    await done.promise;
    expect(seen).toEqual([
      { taskId: 'tsk_old', outcome: 'delivered' },
      { taskId: 'tsk_stale', outcome: 'superseded', code: 'stale_version' },
    ]);
    const complete = fake.requests.find((r) => r.path === '/v1/tasks/tsk_old/complete')!;
    expect(complete.headers.authorization).toBe('Bearer old-token');
    expect(complete.body).toEqual({ version: 2, result: { from: 'earlier' } });
    expect((await readdir(dir)).filter((f) => f.endsWith('.json'))).toEqual([]);
  });

  it('delivering an older attempt’s entry never removes a newer attempt’s entry written meanwhile', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rouse-spool-test-'));
    const spool = new Spool(dir);
    const entry = (version: number): SpoolEntry => ({
      kind: 'complete',
      taskId: 'tsk_1',
      version,
      result: { version },
      agentToken: 't',
      spooledAt: version,
    });
    await spool.write(entry(3));
    const delivered: number[] = [];
    await spool.deliverAll({
      deliver: async (e) => {
        // The next attempt's report is spooled while the older one is on the wire.
        await spool.write(entry(4));
        delivered.push(e.version);
        return { ok: true };
      },
      onDelivered: () => undefined,
      onError: (err) => {
        throw err;
      },
    });
    expect(delivered).toEqual([3]);
    const onDisk = JSON.parse(await readFile(join(dir, 'tsk_1.json'), 'utf8')) as SpoolEntry;
    expect(onDisk.version).toBe(4);
    const next: number[] = [];
    await spool.deliverAll({
      deliver: async (e) => {
        next.push(e.version);
        return { ok: true };
      },
      onDelivered: () => undefined,
      onError: () => undefined,
    });
    expect(next).toEqual([4]);
    expect((await readdir(dir)).filter((f) => f.endsWith('.json'))).toEqual([]);
  });
});
