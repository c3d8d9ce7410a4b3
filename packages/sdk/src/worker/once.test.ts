import type { Json } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import { InvalidOptionError, LeaseLostError, RouseApiError } from '../errors.js';
import { effectId, type Recorded } from '../test-support/fake-coordinator.js';
import { createTestWorker, deferred, nextEvent, startHarness, within } from '../test-support/harness.js';
import type { TaskHandler } from './task-context.js';

const isEffect = (r: Recorded): boolean => r.path.includes('/effects/');
const isEffectClaim = (r: Recorded): boolean => isEffect(r) && r.path.endsWith('/claim');
const effectCalls = (requests: Recorded[]): string[] =>
  requests.filter(isEffect).map((r) => `${r.method} ${r.path.replace(/^\/v1\/tasks\/[^/]+/, '')}`);

describe('ctx.once', () => {
  it('runs fn once: a second call with the key in the same task gets the recorded value', async () => {
    let runs = 0;
    const { fake } = await startHarness({
      handler: async (_task, ctx) => {
        const first = await ctx.once('email:welcome', async () => {
          runs++;
          return { messageId: 'm1' };
        });
        const second = await ctx.once('email:welcome', async () => {
          runs++;
          return { messageId: 'm2' };
        });
        return { first, second };
      },
    });
    const task = fake.addTask({ version: 3 });
    await within(
      5000,
      fake.waitUntil(() => fake.completed.has(task.id)),
      'completion',
    );
    expect(runs).toBe(1);
    expect(fake.completed.get(task.id)!.result).toEqual({
      first: { messageId: 'm1' },
      second: { messageId: 'm1' },
    });
    // the key is URL-encoded in the path; the claim is fenced by the attempt's version
    expect(effectCalls(fake.requests)).toEqual([
      'POST /effects/email%3Awelcome/claim',
      'PUT /effects/email%3Awelcome',
      'POST /effects/email%3Awelcome/claim',
    ]);
    const [claim, record] = fake.requests.filter(isEffect);
    expect(claim!.body).toEqual({ version: 3 });
    expect(record!.body).toEqual({ claimId: 'clm_1', result: { messageId: 'm1' } });
    expect(fake.effects.get(effectId(task.id, 'email:welcome'))).toMatchObject({
      state: 'done',
      result: { messageId: 'm1' },
    });
  });

  it('sends claimTtlMs and ttlMs, records undefined as null and returns what the coordinator kept', async () => {
    const { fake } = await startHarness({
      handler: async (_task, ctx) => {
        // a JavaScript fn that returns nothing, and one that returns a value JSON turns into a string
        const nothing = await ctx.once('audit', (() => undefined) as unknown as () => Json, {
          claimTtlMs: 5000,
          ttlMs: 3_600_000,
        });
        const date = await ctx.once('stamp', () => new Date(0) as unknown as Json);
        return { nothing, date };
      },
    });
    const task = fake.addTask();
    await within(
      5000,
      fake.waitUntil(() => fake.completed.has(task.id)),
      'completion',
    );
    const bodies = fake.requests.filter(isEffect).map((r) => r.body);
    expect(bodies).toEqual([
      { version: 1, claimTtlMs: 5000 },
      { claimId: 'clm_1', result: null, ttlMs: 3_600_000 },
      { version: 1 },
      { claimId: 'clm_2', result: '1970-01-01T00:00:00.000Z' },
    ]);
    expect(fake.completed.get(task.id)!.result).toEqual({ nothing: null, date: '1970-01-01T00:00:00.000Z' });
  });

  it('hands a retried attempt, in another process, the recorded result instead of running fn again', async () => {
    let runs = 0;
    const handler: TaskHandler = async (_task, ctx) => {
      const receipt = await ctx.once('charge', async () => {
        runs++;
        return { charge: 'ch_1' };
      });
      if (ctx.attempt === 1) throw new Error('crashed after charging');
      return { receipt };
    };
    const { fake, worker } = await startHarness({ handler });
    fake.addTask({ id: 'tsk_retried', attempt: 1, version: 1 });
    await within(
      5000,
      fake.waitUntil(() => fake.failed.has('tsk_retried')),
      'attempt 1 failed',
    );
    await worker.stop();

    const next = await createTestWorker(fake.url, { handler });
    await next.start();
    fake.addTask({ id: 'tsk_retried', attempt: 2, version: 2 });
    await within(
      5000,
      fake.waitUntil(() => fake.completed.has('tsk_retried')),
      'attempt 2 completed',
    );
    expect(runs).toBe(1);
    expect(fake.completed.get('tsk_retried')).toMatchObject({
      version: 2,
      result: { receipt: { charge: 'ch_1' } },
    });
    expect(fake.requests.filter(isEffectClaim).map((r) => r.body)).toEqual([{ version: 1 }, { version: 2 }]);
    expect(effectCalls(fake.requests)).toEqual([
      'POST /effects/charge/claim',
      'PUT /effects/charge',
      'POST /effects/charge/claim',
    ]);
  });

  it('runs fn once when two workers race for a key: the second waits and gets the first one’s result', async () => {
    let runs = 0;
    const started = deferred();
    const finish = deferred();
    const results: { version: number; result: Json }[] = [];
    const bothDone = deferred();
    const handler: TaskHandler = async (_task, ctx) => {
      const result = await ctx.once('email:receipt', async () => {
        runs++;
        started.resolve();
        await finish.promise;
        return { messageId: `sent by version ${ctx.version}` };
      });
      results.push({ version: ctx.version, result });
      if (results.length === 2) bothDone.resolve();
      return result;
    };
    // worker A (one slot) takes version 1 and sits in fn; worker B then gets version 2
    const { fake } = await startHarness({ handler, concurrency: 1 });
    fake.addTask({ id: 'tsk_raced', version: 1 });
    await within(5000, started.promise, 'fn started in worker A');
    const b = await createTestWorker(fake.url, { handler });
    await b.start();
    fake.addTask({ id: 'tsk_raced', attempt: 2, version: 2 });
    // B asked and was told `running` (A's claim), then asks again
    const claimsOfB = (): Recorded[] =>
      fake.requests.filter((r) => isEffectClaim(r) && (r.body as { version: number }).version === 2);
    await within(
      5000,
      fake.waitUntil(() => claimsOfB().length >= 2),
      'B polls',
    );
    expect(results).toEqual([]);
    finish.resolve();
    await within(5000, bothDone.promise, 'both done');
    expect(runs).toBe(1);
    expect(results.map((r) => r.result)).toEqual([
      { messageId: 'sent by version 1' },
      { messageId: 'sent by version 1' },
    ]);
    expect(results.map((r) => r.version)).toEqual([1, 2]);
  });

  it('runs fn once when two calls in one handler race for a key', async () => {
    let runs = 0;
    const { fake } = await startHarness({
      handler: async (task, ctx) => {
        const send = async (): Promise<Json> => {
          runs++;
          // hold the claim until the other call has been told `running`
          await fake.waitUntil(() => fake.requests.filter(isEffectClaim).length >= 2);
          return { sent: task.id };
        };
        const [a, b] = await Promise.all([ctx.once('notify', send), ctx.once('notify', send)]);
        return { a, b };
      },
    });
    const task = fake.addTask();
    await within(
      5000,
      fake.waitUntil(() => fake.completed.has(task.id)),
      'completion',
    );
    expect(runs).toBe(1);
    expect(fake.completed.get(task.id)!.result).toEqual({ a: { sent: task.id }, b: { sent: task.id } });
    expect(effectCalls(fake.requests)).toEqual([
      'POST /effects/notify/claim', // claimed
      'POST /effects/notify/claim', // running
      'PUT /effects/notify',
      'POST /effects/notify/claim', // done
    ]);
  });

  it('gives the claim back when fn throws, so the next attempt runs fn', async () => {
    let runs = 0;
    const { fake } = await startHarness({
      handler: async (_task, ctx) =>
        ctx.once('charge', async () => {
          runs++;
          if (ctx.attempt === 1) throw new Error('card declined');
          return { charge: 'ch_2' };
        }),
    });
    fake.addTask({ id: 'tsk_declined', attempt: 1, version: 1 });
    await within(
      5000,
      fake.waitUntil(() => fake.failed.has('tsk_declined')),
      'attempt 1 failed',
    );
    expect(fake.failed.get('tsk_declined')!.error).toMatchObject({
      message: 'card declined',
      retryable: true,
    });
    const release = fake.requests.find((r) => isEffect(r) && r.method === 'DELETE')!;
    expect(release.path).toBe('/v1/tasks/tsk_declined/effects/charge');
    expect(release.query.get('claimId')).toBe('clm_1');
    expect(fake.effects.has(effectId('tsk_declined', 'charge'))).toBe(false);

    fake.addTask({ id: 'tsk_declined', attempt: 2, version: 2 });
    await within(
      5000,
      fake.waitUntil(() => fake.completed.has('tsk_declined')),
      'attempt 2 completed',
    );
    expect(runs).toBe(2);
    expect(fake.completed.get('tsk_declined')!.result).toEqual({ charge: 'ch_2' });
  });

  it('rejects a bad key or bad options before any request', async () => {
    let runs = 0;
    const fn = (): Json => {
      runs++;
      return 1;
    };
    const { fake } = await startHarness({
      handler: async (_task, ctx) => {
        const errors: unknown[] = [];
        for (const key of ['', 'has space', 'slash/key', 'x'.repeat(201), 42 as unknown as string]) {
          await ctx.once(key, fn).catch((err: unknown) => errors.push(err));
        }
        await ctx.once('ok', fn, { claimTtlMs: 10 }).catch((err: unknown) => errors.push(err));
        await ctx.once('ok', fn, { ttlMs: 1.5 }).catch((err: unknown) => errors.push(err));
        await ctx
          .once('ok', 'not a function' as unknown as () => Json)
          .catch((err: unknown) => errors.push(err));
        expect(errors).toHaveLength(8);
        for (const err of errors) expect(err).toBeInstanceOf(InvalidOptionError);
        return (errors as Error[]).map((e) => e.message);
      },
    });
    const task = fake.addTask();
    await within(
      5000,
      fake.waitUntil(() => fake.completed.has(task.id)),
      'completion',
    );
    const messages = fake.completed.get(task.id)!.result as string[];
    expect(messages[1]).toBe(
      'ctx.once(key) must be 1 to 200 characters of letters, digits and _ . : @ - (got "has space")',
    );
    expect(messages[5]).toMatch(/^ctx.once options.claimTtlMs must be an integer .* from 1000 /);
    expect(messages[6]).toMatch(/^ctx.once options.ttlMs must be an integer .* from 60000 /);
    expect(messages[7]).toMatch(/fn must be a function/);
    expect(runs).toBe(0);
    expect(fake.requests.filter(isEffect)).toEqual([]);
  });

  it('waits out a claim left by a dead attempt, then runs fn', async () => {
    let ranAt: number | undefined;
    const { fake } = await startHarness({
      handler: async (_task, ctx) =>
        ctx.once('deploy', () => {
          ranAt = fake.now();
          return 'deployed';
        }),
    });
    // attempt 1 claimed the key and died before recording; its claim ends in 300 ms
    const expiresAt = fake.now() + 300;
    fake.effects.set(effectId('tsk_orphan', 'deploy'), {
      state: 'running',
      claimId: 'clm_dead',
      version: 1,
      claimExpiresAt: expiresAt,
      result: null,
      doneAt: null,
    });
    const claimedAt: number[] = [];
    fake.on('request', (r: Recorded) => {
      if (isEffectClaim(r)) claimedAt.push(fake.now());
    });
    fake.addTask({ id: 'tsk_orphan', attempt: 2, version: 2 });
    await within(
      5000,
      fake.waitUntil(() => fake.completed.has('tsk_orphan')),
      'completion',
    );
    expect(fake.completed.get('tsk_orphan')!.result).toBe('deployed');
    expect(ranAt).toBeGreaterThanOrEqual(expiresAt);
    // asked again once the claim had lapsed (after what it had left, not a whole second), not in a busy loop
    expect(claimedAt.length).toBeGreaterThanOrEqual(2);
    expect(claimedAt.length).toBeLessThanOrEqual(4);
    expect(claimedAt.at(-1)! - claimedAt[0]!).toBeLessThan(900);
  });

  it('asks again at least 50 ms apart when its clock says the other claim has ended (clock skew)', async () => {
    const { fake } = await startHarness({
      handler: async (_task, ctx) => ctx.once('deploy', () => 'deployed'),
    });
    fake.now = () => Date.now() - 10_000; // the coordinator's clock is 10 s behind this worker's
    fake.effects.set(effectId('tsk_skewed', 'deploy'), {
      state: 'running',
      claimId: 'clm_other',
      version: 1,
      claimExpiresAt: fake.now() + 300,
      result: null,
      doneAt: null,
    });
    fake.addTask({ id: 'tsk_skewed', attempt: 2, version: 2 });
    await within(
      5000,
      fake.waitUntil(() => fake.completed.has('tsk_skewed')),
      'completion',
    );
    const claims = fake.requests.filter(isEffectClaim).length;
    expect(claims).toBeGreaterThanOrEqual(2);
    expect(claims).toBeLessThanOrEqual(300 / 50 + 2);
  });

  it('keeps the result another attempt recorded first, and re-records its own when its claim was taken over', async () => {
    let runs = 0;
    const { fake } = await startHarness({
      handler: async (task, ctx) => {
        const kept = await ctx.once('a', () => {
          runs++;
          // meanwhile another attempt (whose claim this one replaced after a lapse) recorded first
          fake.effects.set(effectId(task.id, 'a'), {
            state: 'done',
            claimId: 'clm_other',
            version: 1,
            claimExpiresAt: 0,
            result: 'theirs',
            doneAt: fake.now(),
          });
          return 'mine';
        });
        const retaken = await ctx.once('b', () => {
          runs++;
          // this claim lapsed and another attempt took the key; that one dies in turn (200 ms)
          fake.effects.set(effectId(task.id, 'b'), {
            state: 'running',
            claimId: 'clm_other',
            version: 1,
            claimExpiresAt: fake.now() + 200,
            result: null,
            doneAt: null,
          });
          return 'mine';
        });
        return { kept, retaken };
      },
    });
    const task = fake.addTask({ version: 2 });
    await within(
      5000,
      fake.waitUntil(() => fake.completed.has(task.id)),
      'completion',
    );
    expect(fake.completed.get(task.id)!.result).toEqual({ kept: 'theirs', retaken: 'mine' });
    expect(runs).toBe(2);
    expect(fake.effects.get(effectId(task.id, 'b'))).toMatchObject({ state: 'done', result: 'mine' });
    const calls = effectCalls(fake.requests);
    expect(calls.slice(0, 2)).toEqual(['POST /effects/a/claim', 'PUT /effects/a']);
    // b: claimed, record refused (conflict), running until the other claim lapsed, claimed, recorded
    const b = fake.requests.filter((r) => isEffect(r) && r.path.includes('/effects/b'));
    const methods = b.map((r) => r.method);
    expect(methods.slice(0, 3)).toEqual(['POST', 'PUT', 'POST']);
    expect(methods.slice(-2)).toEqual(['POST', 'PUT']);
    expect(methods.slice(2, -1).every((m) => m === 'POST')).toBe(true);
    const [refused, recorded] = [b[1]!.body, b.at(-1)!.body] as { claimId: string; result: Json }[];
    expect(refused!.result).toBe('mine');
    expect(recorded!.result).toBe('mine');
    expect(recorded!.claimId).not.toBe(refused!.claimId);
  });

  it('says plainly when the coordinator predates effect keys, without calling the lease lost', async () => {
    let runs = 0;
    const { fake, worker } = await startHarness({
      handler: async (_task, ctx) => {
        await ctx.once('k', () => ++runs);
        return 'unreachable';
      },
    });
    fake.override = (r, res) => {
      if (!isEffect(r)) return false;
      res.writeHead(404, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          error: {
            code: 'not_found',
            message: `no route ${r.method} ${r.path}`,
            details: { kind: 'route' },
          },
        }),
      );
      return true;
    };
    const leaseLost: unknown[] = [];
    worker.on('leaseLost', (e) => leaseLost.push(e));
    const task = fake.addTask();
    await within(
      5000,
      fake.waitUntil(() => fake.failed.has(task.id)),
      'failure',
    );
    expect(fake.failed.get(task.id)!.error).toMatchObject({
      code: 'unsupported',
      message: expect.stringMatching(/does not know effect keys/),
      retryable: true,
    });
    expect(runs).toBe(0);
    expect(leaseLost).toEqual([]);
  });

  it('aborts the run when the claim says the lease is gone; later calls reject without a request', async () => {
    let runs = 0;
    const errors: unknown[] = [];
    const handled = deferred();
    const { fake, worker } = await startHarness({
      handler: async (_task, ctx) => {
        const fn = (): Json => {
          runs++;
          return 1;
        };
        await ctx.once('k', fn).catch((err: unknown) => errors.push(err));
        await ctx.once('k', fn).catch((err: unknown) => errors.push(err));
        handled.resolve();
        return 'dropped';
      },
    });
    const lost = nextEvent(worker, 'leaseLost');
    fake.stale.add('tsk_stale');
    fake.addTask({ id: 'tsk_stale' });
    const [event] = await within(5000, lost, 'leaseLost');
    expect(event.code).toBe('stale_version');
    await within(5000, handled.promise, 'both calls');
    expect(errors[0]).toBeInstanceOf(RouseApiError);
    expect(errors[0]).toMatchObject({ status: 409, code: 'stale_version' });
    expect(errors[1]).toBeInstanceOf(LeaseLostError);
    expect(runs).toBe(0);
    expect(fake.requests.filter(isEffect)).toHaveLength(1);
  });
});
