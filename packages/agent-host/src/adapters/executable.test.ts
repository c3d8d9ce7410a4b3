import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findExecutable } from './executable.js';

describe('findExecutable', () => {
  const dir = mkdtempSync(join(tmpdir(), 'exe-'));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'tool'), '#!/bin/sh\n', { mode: 0o755 });
  writeFileSync(join(bin, 'plain'), 'data\n', { mode: 0o644 });
  chmodSync(join(bin, 'plain'), 0o644);
  mkdirSync(join(bin, 'adir'));

  it('finds a name on the PATH of the environment given, as spawn does', () => {
    expect(findExecutable('tool', { PATH: `/nonexistent:${bin}` }, dir)).toEqual({
      found: true,
      path: join(bin, 'tool'),
    });
    expect(findExecutable('tool', { PATH: '/nonexistent' }, dir)).toEqual({
      found: false,
      why: 'no "tool" on PATH (/nonexistent)',
    });
    // no PATH: spawn's default search path
    expect(findExecutable('sh', {}, dir)).toMatchObject({ found: true });
    // a file of that name that cannot be executed is named
    expect(findExecutable('plain', { PATH: bin }, dir)).toEqual({
      found: false,
      why: `${join(bin, 'plain')} is not executable`,
    });
  });

  it('takes a name with a slash as a path, relative to the working directory', () => {
    expect(findExecutable('bin/tool', {}, dir)).toEqual({ found: true, path: join(bin, 'tool') });
    expect(findExecutable('/nonexistent/claude', {}, dir)).toEqual({
      found: false,
      why: '/nonexistent/claude does not exist',
    });
    expect(findExecutable(join(bin, 'adir'), {}, dir)).toEqual({
      found: false,
      why: `${join(bin, 'adir')} is not a file`,
    });
    expect(findExecutable('./bin/plain', {}, dir)).toEqual({
      found: false,
      why: `${join(bin, 'plain')} is not executable`,
    });
  });
});
