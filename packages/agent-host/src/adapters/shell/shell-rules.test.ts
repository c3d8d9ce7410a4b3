import { describe, expect, it } from 'vitest';
import {
  classifyShellExit,
  isProgressLine,
  parseShellPayload,
  progressFromLine,
  ShellPayloadError,
} from './shell-rules.js';

describe('shell payloads', () => {
  it('turns a command array, a script string or --bin into argv, with env, stdin, cwd and resultFile', () => {
    expect(
      parseShellPayload({ command: ['make', 'test'], args: ['-j2'], env: { A: '1' }, stdin: 'in' }),
    ).toEqual({
      argv: ['make', 'test', '-j2'],
      programFromPayload: true,
      env: { A: '1' },
      stdin: 'in',
      cwd: null,
      resultFile: null,
    });
    expect(
      parseShellPayload({ command: 'echo $1', args: ['x'], resultFile: 'out.json', cwd: '/tmp' }),
    ).toMatchObject({
      argv: ['/bin/sh', '-c', 'echo $1', 'sh', 'x'],
      resultFile: 'out.json',
      cwd: '/tmp',
    });
    expect(parseShellPayload({ args: ['a'] }, { bin: '/usr/bin/tool', args: ['--fast'] }).argv).toEqual([
      '/usr/bin/tool',
      '--fast',
      'a',
    ]);
  });

  it('refuses what it cannot run, with a clear message', () => {
    const bad: [unknown, RegExp][] = [
      [null, /payload must be an object/],
      [{}, /payload.command must be/],
      [{ command: [] }, /payload.command must be/],
      [{ command: [1] }, /payload.command must be/],
      [{ command: 'x', env: { A: 1 } }, /payload.env must be an object of strings/],
      [{ command: 'x', stdin: 3 }, /payload.stdin/],
      [{ command: 'x', cwd: 'rel' }, /payload.cwd must be an absolute path/],
      [{ command: 'x', args: 'a' }, /payload.args/],
    ];
    for (const [p, re] of bad) {
      expect(() => parseShellPayload(p)).toThrow(ShellPayloadError);
      expect(() => parseShellPayload(p)).toThrow(re);
    }
  });
});

describe('shell progress lines', () => {
  it('reads the ::progress protocol: a fraction or a percentage, then the phase', () => {
    expect(progressFromLine('::progress 0.4 running tests', null)).toEqual({
      value: 0.4,
      phase: 'running tests',
    });
    expect(progressFromLine('::progress 75%', null)).toEqual({ value: 0.75 });
    expect(progressFromLine('::progress 7 too much', null)).toEqual({ value: 1, phase: 'too much' });
    expect(progressFromLine('progress 0.4', null)).toBeNull();
    expect(isProgressLine('::progress 0.5 x')).toBe(true);
    expect(isProgressLine('hello')).toBe(false);
  });

  it('reads a --progress-regex: done/total, or one number', () => {
    const steps = /step (\d+)\/(\d+)/;
    expect(progressFromLine('step 3/4 compiling', steps)).toEqual({ value: 0.75, phase: 'step 3/4' });
    expect(progressFromLine('at 40 percent', /at (\d+) percent/)).toEqual({
      value: 0.4,
      phase: 'at 40 percent',
    });
    expect(progressFromLine('nothing here', steps)).toBeNull();
  });
});

describe('shell exits', () => {
  it('exit 0 completes; other codes fail, retryable unless listed; a signal is never success', () => {
    expect(classifyShellExit({ code: 0, signal: null }, [])).toEqual({ kind: 'complete' });
    expect(classifyShellExit({ code: 3, signal: null }, [])).toMatchObject({
      retryable: true,
      code: 'exit_code',
    });
    expect(classifyShellExit({ code: 3, signal: null }, [3, 4])).toMatchObject({
      retryable: false,
      message: 'the command exited with code 3',
    });
    expect(classifyShellExit({ code: null, signal: 'SIGKILL' }, [])).toMatchObject({
      code: 'killed_by_signal',
      retryable: true,
    });
    expect(classifyShellExit({ code: null, signal: null, spawnError: 'ENOENT' }, [])).toMatchObject({
      code: 'not_started',
    });
  });

  it("a program the payload named that cannot run fails for good; the agent's own is retried", () => {
    const gone = { code: null, signal: null, spawnError: 'spawn /nonexistent/bin ENOENT' };
    const why = '/nonexistent/bin does not exist';
    expect(classifyShellExit(gone, [], { why, whose: 'task' })).toEqual({
      kind: 'fail',
      retryable: false,
      code: 'command_not_found',
      message: 'the command cannot be run: /nonexistent/bin does not exist',
    });
    expect(classifyShellExit(gone, [], { why, whose: 'agent' })).toEqual({
      kind: 'fail',
      retryable: true,
      code: 'bin_not_found',
      message: 'the command cannot be run: /nonexistent/bin does not exist',
    });
    // whose choice the program was
    expect(parseShellPayload({ command: ['/nonexistent/bin'] }).programFromPayload).toBe(true);
    expect(parseShellPayload({ command: 'make' }).programFromPayload).toBe(false);
    expect(parseShellPayload({}, { bin: '/usr/bin/tool' }).programFromPayload).toBe(false);
  });
});
