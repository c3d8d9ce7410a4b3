import { describe, expect, it } from 'vitest';
import { InvalidOptionError, RouseApiError, RouseNetworkError } from '../errors.js';
import { classifyError, classifyValue, parseRetryAfter } from './classify-dependency.js';
import { DependencyTracker, runWithDependency } from './dependencies.js';

const NOW = Date.UTC(2025, 0, 1, 12, 0, 0);

/** An error shaped like the OpenAI / Anthropic SDKs' APIError. */
class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string>,
  ) {
    super(`HTTP ${status} from the API`);
  }
}

const coded = (code: string): Error => Object.assign(new Error(`connect ${code} 127.0.0.1:9`), { code });

describe('classifying a dependency call', () => {
  it('429 with Retry-After in seconds or as an HTTP date is rate_limited with retryAfterMs', () => {
    expect(classifyError(new ApiError(429, { 'retry-after': '20' }), NOW)).toMatchObject({
      state: 'rate_limited',
      retryAfterMs: 20_000,
    });
    const date = new Date(NOW + 90_000).toUTCString();
    expect(classifyError(new ApiError(429, { 'Retry-After': date }), NOW)).toMatchObject({
      state: 'rate_limited',
      retryAfterMs: 90_000,
    });
    // a fetch Response (Headers object) returned, not thrown
    const res = new Response('slow down', { status: 429, headers: { 'retry-after': '1.5' } });
    expect(classifyValue(res, NOW)).toEqual({
      state: 'rate_limited',
      retryAfterMs: 1500,
      message: 'HTTP 429',
    });
    // no or unreadable Retry-After: rate_limited without a wait
    expect(classifyError(new ApiError(429, {}), NOW)).not.toHaveProperty('retryAfterMs');
    expect(parseRetryAfter('soon', NOW)).toBeUndefined();
    expect(parseRetryAfter(new Date(NOW - 5000).toUTCString(), NOW)).toBe(0);
  });

  it('5xx, refused / reset / timed-out connections and timeout aborts are down', () => {
    expect(classifyError(new ApiError(503, {}), NOW)?.state).toBe('down');
    expect(classifyValue(new Response('', { status: 502 }), NOW).state).toBe('down');
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT'])
      expect(classifyError(coded(code), NOW)).toMatchObject({
        state: 'down',
        message: `connect ${code} 127.0.0.1:9`,
      });
    // fetch wraps the socket error: TypeError('fetch failed', { cause })
    expect(classifyError(new TypeError('fetch failed', { cause: coded('ECONNREFUSED') }), NOW)?.state).toBe(
      'down',
    );
    expect(classifyError(new DOMException('The operation timed out.', 'TimeoutError'), NOW)?.state).toBe(
      'down',
    );
    // axios-style
    expect(
      classifyError(Object.assign(new Error('x'), { response: { status: 500, headers: {} } }), NOW)?.state,
    ).toBe('down');
    // the SDK's own errors, when a Rouse coordinator is the dependency
    expect(classifyError(new RouseNetworkError('down', { code: 'ECONNREFUSED' }), NOW)?.state).toBe('down');
    expect(classifyError(new RouseApiError(429, 'rate_limited', 'slow'), NOW)?.state).toBe('rate_limited');
  });

  it('an answer is up; errors that say nothing about the service are not classified', () => {
    expect(classifyValue({ choices: [] }, NOW)).toEqual({ state: 'up' });
    expect(classifyValue(new Response('{}', { status: 200 }), NOW)).toEqual({ state: 'up' });
    expect(classifyError(new ApiError(400, {}), NOW)).toEqual({ state: 'up' }); // it answered: the request was bad
    expect(classifyError(new TypeError('x is undefined'), NOW)).toBeUndefined();
    expect(classifyError(new DOMException('aborted', 'AbortError'), NOW)).toBeUndefined();
  });
});

describe('DependencyTracker', () => {
  it('carries each observation once, re-reports what is still failing, and never repeats an up the coordinator has', () => {
    let now = NOW;
    const t = new DependencyTracker(() => now);
    t.observe('openai', 'up');
    let taken = t.take();
    expect(taken.reports).toEqual([{ name: 'openai', state: 'up' }]);
    t.delivered(taken);
    t.observe('openai', 'up');
    t.observe('openai', 'up');
    expect(t.pending).toBe(false);
    expect(t.take().reports).toEqual([]);

    t.observe('openai', 'rate_limited', { retryAfterMs: 20_000, message: 'slow down' });
    now += 5000; // the beat goes out 5 s later: the wait left is 15 s
    taken = t.take();
    expect(taken.reports).toEqual([
      { name: 'openai', state: 'rate_limited', retryAfterMs: 15_000, message: 'slow down' },
    ]);
    // the beat failed: the report goes with the next one
    t.undelivered(taken);
    taken = t.take();
    expect(taken.reports).toHaveLength(1);
    t.delivered(taken);
    expect(t.take().reports).toEqual([]);

    // down again and again: re-reported with every beat (its report stays fresh on the coordinator)
    t.observe('openai', 'down');
    t.delivered(t.take());
    t.observe('openai', 'down');
    expect(t.take().reports).toEqual([{ name: 'openai', state: 'down' }]);
    expect(t.states()).toEqual({ openai: 'down' });
  });

  it('an up observed while a down was on its way is sent after it', () => {
    const t = new DependencyTracker(() => NOW);
    t.observe('db', 'up');
    t.delivered(t.take());
    t.observe('db', 'down');
    const inFlight = t.take();
    t.observe('db', 'up'); // weighed against "the coordinator has up": nothing to send…
    t.delivered(inFlight); // …but the down arrived meanwhile
    expect(t.take().reports).toEqual([{ name: 'db', state: 'up' }]);
  });

  it('runWithDependency records the outcome and returns or rethrows the original', async () => {
    const t = new DependencyTracker(() => NOW);
    expect(await runWithDependency(t, 'search', async () => 42)).toBe(42);
    const boom = coded('ECONNRESET');
    await expect(runWithDependency(t, 'search', async () => Promise.reject(boom))).rejects.toBe(boom);
    expect(t.take().reports).toEqual([{ name: 'search', state: 'down', message: boom.message }]);
    // a bug in the caller says nothing: the state stays
    await expect(runWithDependency(t, 'search', () => Promise.reject(new TypeError('oops')))).rejects.toThrow(
      'oops',
    );
    expect(t.states()).toEqual({ search: 'down' });
    await expect(runWithDependency(t, 'no spaces', async () => 1)).rejects.toBeInstanceOf(InvalidOptionError);
    expect(() => t.observe('x', 'sideways' as 'up')).toThrow(/must be one of up, down, rate_limited/);
  });
});
