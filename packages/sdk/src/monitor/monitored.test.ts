import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { defineBot } from '../test-support/decorated-bot.js';
import { startFakeCoordinator } from '../test-support/fake-coordinator.js';
import { within } from '../test-support/harness.js';
import { monitor } from './monitor.js';
import { monitored, trackIteration } from './monitored.js';

async function fake() {
  const f = await startFakeCoordinator();
  onTestFinished(() => f.close());
  const options = {
    url: f.url,
    token: 'enroll',
    agentType: 'digest',
    heartbeatIntervalMs: 60_000,
    shutdownSignals: false as const,
  };
  return { f, options };
}

/** Compile the decorated fixture with TypeScript (as an author's build would) and load it. */
async function loadDecoratedBot(): Promise<typeof defineBot> {
  const source = await readFile(new URL('../test-support/decorated-bot.ts', import.meta.url), 'utf8');
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
  });
  expect(outputText).toContain('__esDecorate'); // standard decorators, lowered by tsc
  const dir = await mkdtemp(join(tmpdir(), 'rouse-decorator-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'decorated-bot.mjs');
  await writeFile(file, outputText);
  return ((await import(/* @vite-ignore */ pathToFileURL(file).href)) as { defineBot: typeof defineBot })
    .defineBot;
}

describe('monitored() and @trackIteration', () => {
  it('monitored() starts, runs, and stops the monitor, returning the value', async () => {
    const { f, options } = await fake();
    const value = await monitored(options, async (m) => {
      m.progress(1, 'done');
      return m.agentId;
    });
    expect(value).toBe('agt_1');
    expect(f.agentBeats().at(-1)).toMatchObject({ status: 'running', progress: 1, phase: 'done' });
    expect(f.left).toEqual(['agt_1']);
  });

  it('monitored() reports the error with its message before leaving, and rethrows it', async () => {
    const { f, options } = await fake();
    const boom = new Error('the feed is gone');
    await expect(
      monitored(options, async (m) => {
        m.progress(0.3);
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(f.agentBeats().at(-1)).toMatchObject({
      status: 'error',
      statusMessage: 'the feed is gone',
      progress: 0.3,
    });
    const beatAt = f.requests.findLastIndex((r) => r.path.endsWith('/heartbeat'));
    const leaveAt = f.requests.findIndex((r) => r.method === 'DELETE');
    expect(beatAt).toBeLessThan(leaveAt);
  });

  it('@trackIteration runs each call as one iteration of the monitor it names', async () => {
    const { f, options } = await fake();
    const defineBotCompiled = await loadDecoratedBot();
    const shared = monitor({ ...options, heartbeatIntervalMs: 20 });
    onTestFinished(() => shared.stop());
    await shared.start();
    const Bot = defineBotCompiled(trackIteration, shared);
    const bot = new Bot();
    // no monitor yet: the call runs, untracked
    expect(await bot.handle('early')).toBe('EARLY');
    bot.monitor = shared;
    const counts: number[] = [];
    shared.on('iteration', ({ count, error }) => counts.push(error ? -count : count));
    expect(await bot.handle('hello')).toBe('HELLO');
    await expect(bot.handle('bad')).rejects.toThrow('cannot handle bad');
    expect(await bot.tick()).toBe(3);
    expect(counts).toEqual([1, -2, 3]);
    await within(
      5000,
      f.waitUntil(() => f.agentBeats().some((b) => b.metadata?.iterations === 3)),
      'counted',
    );
  });
});
