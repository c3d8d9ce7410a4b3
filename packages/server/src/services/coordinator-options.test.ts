import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../core/clock.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import { type CoordinatorOptions, resolveCoordinatorOptions } from './coordinator-options.js';

const clock = new ManualClock();
const base: CoordinatorOptions = {
  store: createSqliteStore({ path: ':memory:', clock }),
  clock,
  logger: pino({ level: 'silent' }),
  blobDir: '/tmp/rouse-test-blobs',
  tokens: { admin: 'admin-token', enrollment: 'enroll-token' },
};

afterAll(() => base.store.close());

describe('resolveCoordinatorOptions', () => {
  it('fills documented defaults', () => {
    const r = resolveCoordinatorOptions(base);
    expect(r).toMatchObject({
      defaultMaxAttempts: 4,
      writeBackGraceMs: 30_000,
      maxLogBytesPerTask: 1024 * 1024,
      maxResultBytes: 256 * 1024 * 1024,
      sweepIntervalMs: 1000,
      restartGraceMs: null,
      backoff: { baseMs: 1000, capMs: 300_000, jitter: 0 },
    });
    expect(r.timingDefaults.heartbeatIntervalMs).toBe(5000);
  });

  it.each([
    [{ defaultMaxAttempts: 0 }, 'defaultMaxAttempts must be an integer >= 1'],
    [{ writeBackGraceMs: -1 }, 'writeBackGraceMs must be an integer >= 0'],
    [{ sweepIntervalMs: 1.5 }, 'sweepIntervalMs must be an integer >= 10'],
    [{ restartGraceMs: -5 }, 'restartGraceMs must be an integer >= 0'],
    [{ timingDefaults: { timeoutFactor: 1 } }, 'timingDefaults.timeoutFactor must be a number > 1'],
    [
      { timingDefaults: { heartbeatIntervalMs: 0 } },
      'timingDefaults.heartbeatIntervalMs must be an integer >= 100 (milliseconds)',
    ],
    [{ timingDefaults: { claimTimeoutMs: 50 } }, 'timingDefaults.claimTimeoutMs must be an integer >= 100'],
    [{ timingDefaults: { stallTimeoutMs: 500 } }, 'timingDefaults.stallTimeoutMs must be an integer >= 1000'],
    [
      { timingDefaults: { executionTimeoutMs: 10 } },
      'timingDefaults.executionTimeoutMs must be an integer >= 100',
    ],
    [{ backoff: { baseMs: -1 } }, 'backoff.baseMs must be an integer >= 0'],
    [{ tokens: { admin: '', enrollment: 'e' } }, 'tokens.admin must be a non-empty string'],
    [
      { tokens: { admin: 'same', enrollment: 'same' } },
      'tokens.enrollment must differ from the other tokens',
    ],
    [{ tokens: { admin: 'rsa_x', enrollment: 'e' } }, 'tokens.admin must not start with "rsa_"'],
    [{ blobDir: '' }, 'blobDir must be a non-empty path'],
    [{ alertDelivery: { maxAttempts: 0 } }, 'alertDelivery.maxAttempts must be an integer >= 1'],
    [{ alertDelivery: { timeoutMs: 2.5 } }, 'alertDelivery.timeoutMs must be an integer >= 1'],
    [{ alertDelivery: { pollMs: 5 } }, 'alertDelivery.pollMs must be an integer >= 10'],
  ] as [Partial<CoordinatorOptions>, string][])(
    'rejects %o naming the option and the rule',
    (over, message) => {
      expect(() => resolveCoordinatorOptions({ ...base, ...over })).toThrow(message);
    },
  );
});
