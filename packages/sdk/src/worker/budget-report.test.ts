/**
 * `ctx.reportBudget`: a held attempt's spend against its budget rides on the agent heartbeat's
 * `metrics.budgets`; a report past its limit is sent at once, and before the failure that follows it.
 */
import type { AgentHeartbeatRequest } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import { InvalidOptionError, NonRetryableError } from '../errors.js';
import type { Recorded } from '../test-support/fake-coordinator.js';
import { deferred, nextEvent, startHarness } from '../test-support/harness.js';

const isBeat = (r: Recorded): boolean => r.path.endsWith('/heartbeat');
const budgetsOf = (r: Recorded) => (r.body as AgentHeartbeatRequest).metrics?.budgets;

describe('ctx.reportBudget', () => {
  it('rides on the heartbeats while the attempt runs', async () => {
    const release = deferred();
    const { fake, worker } = await startHarness({
      heartbeatIntervalMs: 20,
      handler: async (_task, ctx) => {
        ctx.reportBudget({ kind: 'tokens', limit: 1000, used: 400 });
        await release.promise;
        return null;
      },
    });
    const task = fake.addTask();
    const beat = await fake.waitForRequest((r) => isBeat(r) && budgetsOf(r) !== undefined);
    expect(budgetsOf(beat)).toEqual([{ taskId: task.id, kind: 'tokens', limit: 1000, used: 400 }]);
    const completed = nextEvent(worker, 'completed');
    release.resolve();
    await completed;
  });

  it('past its limit: a heartbeat goes at once, and before the failure', async () => {
    const { fake } = await startHarness({
      heartbeatIntervalMs: 600_000, // no regular beat during the test
      handler: async (_task, ctx) => {
        ctx.reportBudget({ kind: 'cost_usd', limit: 1, used: 1.25 });
        throw new NonRetryableError('budget exceeded', { code: 'resource_runaway' });
      },
    });
    const task = fake.addTask();
    const failed = await fake.waitForRequest((r) => r.path === `/v1/tasks/${task.id}/fail`);
    const beats = fake.requests.filter((r) => isBeat(r) && budgetsOf(r) !== undefined);
    expect(beats.length).toBeGreaterThan(0);
    expect(budgetsOf(beats[0]!)).toEqual([{ taskId: task.id, kind: 'cost_usd', limit: 1, used: 1.25 }]);
    expect(fake.requests.indexOf(beats[0]!)).toBeLessThan(fake.requests.indexOf(failed));
  });

  it('refuses a bad report', async () => {
    const errors: unknown[] = [];
    const done = deferred();
    const { fake } = await startHarness({
      handler: async (_task, ctx) => {
        for (const bad of [
          { kind: 'bananas', limit: 1, used: 0 },
          { kind: 'tokens', limit: 0, used: 0 },
          { kind: 'turns', limit: 3, used: -1 },
          { kind: 'turns', limit: 3, used: Number.NaN },
        ]) {
          try {
            ctx.reportBudget(bad as never);
          } catch (err) {
            errors.push(err);
          }
        }
        done.resolve();
        return null;
      },
    });
    fake.addTask();
    await done.promise;
    expect(errors).toHaveLength(4);
    expect(errors.every((e) => e instanceof InvalidOptionError)).toBe(true);
    expect((errors[0] as Error).message).toContain(
      'kind must be one of tokens, cost_usd, turns, wall_clock_ms',
    );
  });
});
