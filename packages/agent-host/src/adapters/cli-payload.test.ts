import { describe, expect, it } from 'vitest';
import { PayloadError, parseCliPayload, readCarriedSession } from './cli-payload.js';

describe('coding-agent payloads', () => {
  it('takes the prompt and the optional fields, the payload over the type defaults', () => {
    expect(parseCliPayload({ prompt: 'fix it' })).toEqual({
      prompt: 'fix it',
      cwd: null,
      model: null,
      maxBudgetUsd: null,
      limits: { maxTokens: null, maxCostUsd: null, maxTurns: null, maxWallClockMs: null },
    });
    const p = parseCliPayload(
      { prompt: 'x', cwd: '/tmp/w', maxTokens: 500, maxBudgetUsd: 0.5 },
      { model: 'm1', maxTokens: 9000, maxTurns: 4, maxWallClockMs: 60_000 },
    );
    expect(p).toMatchObject({
      cwd: '/tmp/w',
      model: 'm1',
      maxBudgetUsd: 0.5,
      limits: { maxTokens: 500, maxTurns: 4, maxWallClockMs: 60_000, maxCostUsd: null },
    });
  });

  it('refuses what it cannot run, with a clear message', () => {
    const bad: [unknown, RegExp][] = [
      [null, /payload must be an object/],
      [['x'], /payload must be an object/],
      [{}, /payload.prompt must be a non-empty string/],
      [{ prompt: '  ' }, /payload.prompt/],
      [{ prompt: 'x', cwd: 'rel/dir' }, /absolute path/],
      [{ prompt: 'x', model: 3 }, /payload.model/],
      [{ prompt: 'x', maxTokens: 1.5 }, /maxTokens must be a positive integer \(got 1.5\)/],
      [{ prompt: 'x', maxCostUsd: -1 }, /maxCostUsd must be a positive number/],
    ];
    for (const [payload, re] of bad) {
      expect(() => parseCliPayload(payload)).toThrow(PayloadError);
      expect(() => parseCliPayload(payload)).toThrow(re);
    }
  });

  it('reads a carried session of the same flavor only', () => {
    const ref = { id: 'b1', bytes: 10, sha256: 'ab', contentType: 'application/x-rouse-session' };
    expect(readCarriedSession({ flavor: 'codex', sessionId: 's1', transcript: ref }, 'codex')).toEqual({
      flavor: 'codex',
      sessionId: 's1',
      transcript: ref,
    });
    expect(
      readCarriedSession({ flavor: 'codex', sessionId: 's1', transcript: null }, 'codex')?.transcript,
    ).toBeNull();
    expect(readCarriedSession({ flavor: 'claude', sessionId: 's1' }, 'codex')).toBeNull();
    expect(readCarriedSession('s1', 'codex')).toBeNull();
    expect(readCarriedSession(null, 'codex')).toBeNull();
  });
});
