import { describe, expect, it } from 'vitest';
import { classifyRunEnd, describeExit } from './cli-outcome.js';

const ok = { ok: true };
const code = (c: number) => ({ code: c, signal: null });
const sig = (s: NodeJS.Signals) => ({ code: null, signal: s });

describe('classifying how a CLI run ended', () => {
  it('completes on an ok result with a clean exit, or after the final grace kill', () => {
    expect(classifyRunEnd({ result: ok, exit: code(0), stoppedBy: null })).toEqual({ kind: 'complete' });
    expect(classifyRunEnd({ result: ok, exit: sig('SIGKILL'), stoppedBy: 'final_grace' })).toEqual({
      kind: 'complete',
    });
  });

  it('never counts a signal death it did not cause as success, even after a result', () => {
    for (const exit of [sig('SIGKILL'), sig('SIGTERM'), code(143), code(130)]) {
      expect(classifyRunEnd({ result: ok, exit, stoppedBy: null })).toMatchObject({
        kind: 'fail',
        retryable: true,
        code: 'killed_by_signal',
      });
      expect(classifyRunEnd({ result: null, exit, stoppedBy: null })).toMatchObject({
        kind: 'fail',
        retryable: true,
        code: 'killed_by_signal',
      });
    }
  });

  it('fails auth and budget errors for good, turn and API failures for a retry', () => {
    const err = (kind: 'auth' | 'budget' | 'api' | 'turn_failed' | 'interrupted') => ({
      result: { ok: false, error: { kind, detail: 'd' } },
      exit: code(1),
      stoppedBy: null,
    });
    expect(classifyRunEnd(err('auth'))).toMatchObject({ retryable: false, code: 'cli_auth' });
    expect(classifyRunEnd(err('budget'))).toMatchObject({ retryable: false, code: 'resource_runaway' });
    expect(classifyRunEnd(err('api'))).toMatchObject({ retryable: true, code: 'api_error' });
    expect(classifyRunEnd(err('turn_failed'))).toMatchObject({ retryable: true, code: 'turn_failed' });
    expect(classifyRunEnd(err('interrupted'))).toMatchObject({ retryable: true, code: 'interrupted' });
  });

  it('an exit without a result is a retryable failure, whatever its code', () => {
    expect(classifyRunEnd({ result: null, exit: code(0), stoppedBy: null })).toMatchObject({
      code: 'no_result',
      retryable: true,
    });
    expect(classifyRunEnd({ result: null, exit: code(2), stoppedBy: null })).toMatchObject({
      code: 'no_result',
      message: 'the CLI exited with code 2 without a result',
    });
    expect(
      classifyRunEnd({
        result: null,
        exit: { code: null, signal: null, spawnError: 'ENOENT' },
        stoppedBy: null,
      }),
    ).toMatchObject({ code: 'cli_not_started', retryable: true });
    expect(
      classifyRunEnd({
        result: null,
        exit: { code: null, signal: null, spawnError: 'spawn codex ENOENT' },
        stoppedBy: null,
        binMissing: 'no "codex" on PATH (/usr/bin:/bin)',
      }),
    ).toEqual({
      kind: 'fail',
      retryable: true,
      code: 'bin_not_found',
      message: 'the CLI cannot be run: no "codex" on PATH (/usr/bin:/bin)',
    });
  });

  it('a run the adapter interrupted for a wake is resumed, unless its turn had completed', () => {
    expect(classifyRunEnd({ result: null, exit: code(1), stoppedBy: 'wake' })).toEqual({ kind: 'resume' });
    expect(
      classifyRunEnd({
        result: { ok: false, error: { kind: 'interrupted', detail: '' } },
        exit: code(0),
        stoppedBy: 'wake',
      }),
    ).toEqual({ kind: 'resume' });
    expect(classifyRunEnd({ result: ok, exit: code(0), stoppedBy: 'wake' })).toEqual({ kind: 'complete' });
  });

  it('describes exits for humans', () => {
    expect(describeExit(code(143))).toBe('exited with code 143 (SIGTERM)');
    expect(describeExit(sig('SIGKILL'))).toBe('was killed by SIGKILL');
  });
});
