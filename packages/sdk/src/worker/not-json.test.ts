/**
 * Values a handler gives the runtime that JSON cannot carry (a cycle, a BigInt, a function): the
 * task they belong to fails with a clear error, and the worker goes on with its other tasks.
 */
import type { Json } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import { NonRetryableError } from '../errors.js';
import { deferred, nextEvent, startHarness } from '../test-support/harness.js';
import { runHandler } from '../testing/index.js';

function circular(): Json {
  const o: Record<string, unknown> = { a: 1 };
  o.self = o;
  return o as Json;
}

describe('values that are not JSON', () => {
  it('fails a task whose result is not JSON for good, and the worker carries on with the others', async () => {
    const release = deferred();
    const { fake, worker } = await startHarness({
      concurrency: 5,
      handler: async (task, ctx) => {
        const kind = (task.payload as { kind: string }).kind;
        if (kind === 'slow') {
          await release.promise;
          return { ok: true };
        }
        if (kind === 'logged') ctx.log('a line first'); // the report waits for the log flush
        if (kind === 'bigint') return { n: 10n } as unknown as Json;
        if (kind === 'bare-bigint') return 10n as unknown as Json;
        return circular();
      },
    });
    const slow = fake.addTask({ payload: { kind: 'slow' } });
    const bad = ['circular', 'bigint', 'bare-bigint', 'logged'].map((kind) =>
      fake.addTask({ payload: { kind } }),
    );
    await fake.waitUntil(() => bad.every((t) => fake.failed.has(t.id)));
    for (const t of bad) {
      expect(fake.failed.get(t.id)!.error).toMatchObject({ code: 'result_invalid', retryable: false });
    }
    expect(fake.failed.get(bad[0]!.id)!.error.message).toMatch(
      /^the handler's result cannot be sent as JSON \(Converting circular structure to JSON/,
    );
    expect(fake.failed.get(bad[1]!.id)!.error.message).toMatch(/BigInt/);
    // the other task, still running meanwhile, completes as usual
    const completed = nextEvent(worker, 'completed');
    release.resolve();
    expect((await completed)[0].task.id).toBe(slow.id);
    expect(fake.completed.get(slow.id)?.result).toEqual({ ok: true });
  });

  it('fails with the error’s code when a NonRetryableError’s details are not JSON (details dropped)', async () => {
    const { fake } = await startHarness({
      handler: async () => {
        throw new NonRetryableError('bad input', { code: 'bad_input', details: { n: 10n } });
      },
    });
    const task = fake.addTask();
    await fake.waitUntil(() => fake.failed.has(task.id));
    const { error } = fake.failed.get(task.id)!;
    expect(error).toMatchObject({ code: 'bad_input', retryable: false });
    expect(error.message).toMatch(/^bad input \(its details were dropped: .*BigInt/);
    expect(error.details).toBeUndefined();
  });

  it('rejects ctx.checkpoint with checkpoint_invalid when the state or session is not JSON', async () => {
    const seen: unknown[] = [];
    const { fake } = await startHarness({
      handler: async (_task, ctx) => {
        for (const args of [[circular()], [{ ok: 1 }, { n: 10n } as unknown as Json]] as [Json, Json?][]) {
          try {
            await ctx.checkpoint(...args);
          } catch (err) {
            seen.push(err);
          }
        }
        return null;
      },
    });
    const task = fake.addTask();
    await fake.waitUntil(() => fake.completed.has(task.id));
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBeInstanceOf(NonRetryableError);
    expect(seen[0]).toMatchObject({ code: 'checkpoint_invalid', details: { argument: 'state' } });
    expect((seen[0] as Error).message).toMatch(/^ctx\.checkpoint\(state\): .*circular/);
    expect(seen[1]).toMatchObject({ code: 'checkpoint_invalid', details: { argument: 'session' } });
    expect(fake.requests.some((r) => r.path.endsWith('/checkpoint'))).toBe(false);
  });

  it('runHandler reports a result that is not JSON as the worker would', async () => {
    const run = await runHandler(async () => circular());
    expect(run.result).toBeUndefined();
    expect(run.error).toBeInstanceOf(NonRetryableError);
    expect(run.error).toMatchObject({ code: 'result_invalid' });
  });
});
