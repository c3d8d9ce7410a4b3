import type { AgentHeartbeatRequest } from '@rouse/protocol';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { InvalidOptionError } from '../errors.js';
import { type FakeCoordinator, startFakeCoordinator } from '../test-support/fake-coordinator.js';
import { deferred, freePort, within } from '../test-support/harness.js';
import { recordingLogger } from '../test-support/recording-logger.js';
import type { MonitorEvents } from './events.js';
import { type Monitor, monitor } from './monitor.js';
import type { MonitorOptions } from './options.js';

afterEach(() => {
  vi.unstubAllEnvs();
});

/** A fake coordinator and a started monitor against it (fast, quiet); both closed when the test ends. */
async function startMonitor(
  options: Partial<MonitorOptions> = {},
): Promise<{ fake: FakeCoordinator; m: Monitor }> {
  const fake = await startFakeCoordinator();
  const m = monitor({
    url: fake.url,
    token: 'enroll-token',
    agentType: 'chat-bot',
    heartbeatIntervalMs: 20,
    shutdownSignals: false,
    retry: { attempts: 2, baseDelayMs: 5, maxDelayMs: 20 },
    ...options,
  });
  onTestFinished(async () => {
    await m.stop();
    await fake.close();
  });
  await m.start();
  return { fake, m };
}

/** The first agent heartbeat (past or future) that `pred` accepts. */
async function beatWhere(
  fake: FakeCoordinator,
  pred: (b: AgentHeartbeatRequest) => boolean,
): Promise<AgentHeartbeatRequest> {
  await within(
    5000,
    fake.waitUntil(() => fake.agentBeats().some(pred)),
    'a matching heartbeat',
  );
  return fake.agentBeats().find(pred)!;
}

function next<K extends keyof MonitorEvents>(m: Monitor, event: K): Promise<MonitorEvents[K]> {
  return new Promise((resolve) => {
    (m.once as (e: string, l: (...a: unknown[]) => void) => Monitor)(event, (...args) =>
      resolve(args as MonitorEvents[K]),
    );
  });
}

describe('monitor()', () => {
  it('registers as a slot (key, supervisor, requires), beats at once and then with status, progress and metadata', async () => {
    vi.stubEnv('ROUSE_AGENT_KEY', 'host-3/bot-1');
    vi.stubEnv('ROUSE_SUPERVISOR_ID', 'sup-3');
    const { fake, m } = await startMonitor({ requires: ['openai'], metadata: { model: 'small' } });
    expect(fake.registrations[0]).toMatchObject({
      agentType: 'chat-bot',
      key: 'host-3/bot-1',
      supervisorId: 'sup-3',
      requires: ['openai'],
    });
    expect(fake.registrations[0]).not.toHaveProperty('taskTypes');
    expect([m.agentId, m.incarnation]).toEqual(['agt_1', 1]);
    const first = await beatWhere(fake, () => true);
    expect(first).toMatchObject({ status: 'running', metadata: { model: 'small' } });
    expect(first.metrics!.rssBytes).toBeGreaterThan(0);

    m.progress(0.5, 'reading mail');
    m.metadata({ step_progress: 3 });
    m.error('the mailbox refused the login');
    const failing = await beatWhere(fake, (b) => b.status === 'error');
    expect(failing).toMatchObject({
      statusMessage: 'the mailbox refused the login',
      progress: 0.5,
      phase: 'reading mail',
      metadata: { model: 'small', step_progress: 3 },
    });
    m.clearError();
    m.metadata({ model: undefined });
    m.phase('idle');
    const fine = await beatWhere(fake, (b) => b.status === 'running' && b.phase === 'idle');
    expect(fine).not.toHaveProperty('statusMessage');
    expect(fine.metadata).toEqual({ step_progress: 3 });
    m.status('idle');
    await beatWhere(fake, (b) => b.status === 'idle');

    // bad values are refused, naming the call and the rule; nothing changes
    expect(() => m.progress(1.5)).toThrow(/progress\(value\) must be a number from 0 to 1/);
    expect(() => m.metadata({ blob: 'x'.repeat(3000) })).toThrow(/within 2048 characters as JSON/);
    expect(() => m.status('stalled' as 'idle')).toThrow(InvalidOptionError);
    expect(() => m.dependency('bad name', 'up')).toThrow(/dependency name/);
    m.metadata({ after: true });
    const last = await beatWhere(fake, (b) => b.metadata?.after === true);
    expect(last.metadata).toEqual({ step_progress: 3, after: true });
  });

  it('refuses metadata JSON cannot carry, and keeps a copy: objects changed later cannot break a beat', async () => {
    const { fake, m } = await startMonitor();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => m.metadata({ c: cyclic as never })).toThrow(
      /^metadata\(patch\) must be JSON \(Converting circular/,
    );
    expect(() => m.metadata({ n: 10n as never })).toThrow(/must be JSON .*BigInt/);
    const model: Record<string, unknown> = { name: 'small' };
    m.metadata({ model: model as never, turn: 1 });
    model.self = model; // a cycle made after the call: the monitor sent a copy
    await beatWhere(fake, (b) => b.metadata?.turn === 1);
    m.metadata({ turn: 2 });
    const later = await beatWhere(fake, (b) => b.metadata?.turn === 2);
    expect(later.metadata).toEqual({ model: { name: 'small' }, turn: 2 });
  });

  it('times iterations for metrics.iterationMs, counts them in metadata, and shows a hung one before it ends', async () => {
    const { fake, m } = await startMonitor();
    const seen: number[] = [];
    m.on('iteration', ({ count }) => seen.push(count));
    await m.iteration(() => new Promise((r) => setTimeout(r, 40)));
    expect(await m.iteration(() => 'sync value')).toBe('sync value');
    const timed = await beatWhere(fake, (b) => b.metadata?.iterations === 2);
    const withTime = fake.agentBeats().filter((b) => b.metrics?.iterationMs !== undefined);
    expect(Math.max(...withTime.map((b) => b.metrics!.iterationMs!))).toBeGreaterThanOrEqual(35);
    expect(timed.metadata).toEqual({ iterations: 2 });
    // a step that does not end: its time so far is reported while it runs
    const release = deferred();
    const hung = m.iteration(() => release.promise);
    await beatWhere(fake, (b) => (b.metrics?.iterationMs ?? 0) >= 100);
    release.resolve();
    await hung;
    // a failing step is rethrown, and counted
    const boom = new Error('step failed');
    const failed = next(m, 'iteration');
    await expect(m.iteration(() => Promise.reject(boom))).rejects.toBe(boom);
    expect((await failed)[0]).toMatchObject({ count: 4, error: boom });
    expect(seen).toEqual([1, 2, 3, 4]);
    // no beats carry iterationMs once nothing runs
    const quiet = fake.agentBeats().length;
    await fake.waitUntil(() => fake.agentBeats().length >= quiet + 3);
    expect(
      fake
        .agentBeats()
        .slice(quiet + 1)
        .every((b) => b.metrics?.iterationMs === undefined),
    ).toBe(true);
  });

  it('reports dependencies from withDependency and dependency(), never repeating an up', async () => {
    const { fake, m } = await startMonitor({ iterationsField: false, metrics: false });
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:443'), { code: 'ECONNREFUSED' });
    await expect(m.withDependency('mail', () => Promise.reject(refused))).rejects.toBe(refused);
    m.dependency('openai', 'rate_limited', { retryAfterMs: 10_000, message: 'quota' });
    const beat = await beatWhere(fake, (b) => (b.dependencies ?? []).length === 2);
    expect(beat.dependencies).toEqual([
      { name: 'mail', state: 'down', message: 'connect ECONNREFUSED 10.0.0.5:443' },
      { name: 'openai', state: 'rate_limited', retryAfterMs: expect.any(Number), message: 'quota' },
    ]);
    expect(beat).not.toHaveProperty('metrics');
    expect(m.dependencies).toEqual({ mail: 'down', openai: 'rate_limited' });
    await m.withDependency('mail', async () => 'ok');
    await m.withDependency('mail', async () => 'ok');
    await beatWhere(fake, (b) => b.dependencies?.some((d) => d.name === 'mail' && d.state === 'up') ?? false);
    const count = fake.agentBeats().length;
    await m.withDependency('mail', async () => 'still ok');
    await fake.waitUntil(() => fake.agentBeats().length >= count + 3);
    const ups = fake
      .agentBeats()
      .flatMap((b) => b.dependencies ?? [])
      .filter((d) => d.state === 'up');
    expect(ups).toHaveLength(1);
  });

  it('hands a wake to onWake and interrupted until safePoint(); other commands are events; terminate stops', async () => {
    const log = recordingLogger();
    const { fake, m } = await startMonitor({ logger: log.logger });
    const reasons: (string | undefined)[] = [];
    const off = m.onWake((r) => reasons.push(r));
    m.onWake(() => {
      throw new Error('a listener that throws is logged, not thrown');
    });
    const woke = next(m, 'wake');
    const checkpoint = new Promise<void>((resolve) =>
      m.on('command', ({ command }) => {
        if (command.type === 'checkpoint') resolve();
      }),
    );
    fake.commands.push({ type: 'wake', reason: 'stalled' }, { type: 'checkpoint' });
    expect((await within(5000, woke, 'wake'))[0]).toEqual({ reason: 'stalled' });
    await within(5000, checkpoint, 'the checkpoint command as an event');
    expect(reasons).toEqual(['stalled']);
    expect(m.interrupted).toBe(true);
    expect(await m.safePoint()).toBe(true);
    expect(m.interrupted).toBe(false);
    expect(await m.safePoint()).toBe(false);
    expect(log.lines.some((l) => l.level === 'warn' && l.msg === 'monitor onWake error')).toBe(true);
    off();

    const stopped = next(m, 'stopped');
    fake.commands.push({ type: 'terminate', reason: 'policy' });
    await within(5000, stopped, 'stopped by terminate');
    expect(m.signal.aborted).toBe(true);
    expect(fake.left).toEqual(['agt_1']);
  });

  it('stop() aborts its signal, sends what changed since the last beat, then leaves; SIGTERM stops it', async () => {
    const before = process.listenerCount('SIGTERM');
    const { fake, m } = await startMonitor({ heartbeatIntervalMs: 60_000, shutdownSignals: ['SIGTERM'] });
    await beatWhere(fake, () => true); // the first beat, at once
    expect(process.listenerCount('SIGTERM')).toBe(before + 1);
    m.progress(1, 'all done');
    const stopped = next(m, 'stopped');
    const ours = process.listeners('SIGTERM').at(-1)!;
    ours('SIGTERM');
    expect(m.signal.aborted).toBe(true);
    await within(5000, stopped, 'stopped');
    const beats = fake.agentBeats();
    expect(beats).toHaveLength(2);
    expect(beats[1]).toMatchObject({ progress: 1, phase: 'all done' });
    expect(fake.requests.at(-1)).toMatchObject({ method: 'DELETE', path: '/v1/agents/agt_1' });
    expect(process.listenerCount('SIGTERM')).toBe(before);
    await m.stop(); // again: the same, finished
    await expect(m.start()).rejects.toThrow(/start\(\) called on a monitor that is stopped/);
  });

  it('waits for a coordinator that is not up yet, as the worker does', async () => {
    const port = await freePort();
    const log = recordingLogger();
    const m = monitor({
      url: `http://127.0.0.1:${port}`,
      token: 't',
      agentType: 'loop',
      shutdownSignals: false,
      logger: log.logger,
    });
    onTestFinished(() => m.stop());
    const started = m.start();
    await within(
      10_000,
      log.waitFor(/^waiting for the coordinator at .* \(ECONNREFUSED\), retrying in/),
      'waiting',
    );
    const fake = await startFakeCoordinator(port);
    onTestFinished(() => fake.close());
    await within(15_000, started, 'started');
    expect(m.agentId).toBe('agt_1');
  });
});

describe('heartbeat stats', () => {
  it('counts heartbeats sent and failed, and reports the failures in the next heartbeat that gets through', async () => {
    const { fake, m } = await startMonitor({ retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 } });
    await within(
      5000,
      fake.waitUntil(() => m.heartbeatStats.sent > 0),
      'a heartbeat answered',
    );
    expect(m.heartbeatStats.failed).toBe(0);
    // The coordinator answers 503 for a while: the beats fail.
    let refused = 0;
    fake.override = (req, res) => {
      if (!req.path.endsWith('/heartbeat') || refused >= 3) return false;
      refused++;
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'unavailable', message: 'down for a moment' } }));
      return true;
    };
    const reported = await beatWhere(fake, (b) => (b.metrics?.heartbeatFailures ?? 0) >= 3);
    expect(reported.metrics?.heartbeatFailures).toBe(3);
    await within(
      5000,
      fake.waitUntil(() => m.heartbeatStats.consecutiveFailures === 0),
      'an answered heartbeat',
    );
    expect(m.heartbeatStats.failed).toBe(3);
    expect(m.heartbeatStats.lastOkAt).toBeGreaterThan(0);
  });
});
