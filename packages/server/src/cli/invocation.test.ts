import { describe, expect, it } from 'vitest';
import { type InvocationInput, rouseCommand, shellQuote } from './invocation.js';

const BIN = '/home/u/rouse/packages/server/bin/rouse.js';

/** A file system of symlinks (path → target); anything else does not exist. */
function input(over: Partial<InvocationInput>, links: Record<string, string> = {}): InvocationInput {
  return {
    env: { PATH: '/usr/local/bin:/usr/bin' },
    cwd: '/home/u/rouse',
    script: BIN,
    findOnPath: (name, path) => {
      for (const dir of path.split(':')) if (links[`${dir}/${name}`]) return `${dir}/${name}`;
      return null;
    },
    realpath: (p) => (p === BIN ? BIN : (links[p] ?? null)),
    ...over,
  };
}

describe('rouseCommand: how the user runs rouse again', () => {
  it('npx rouse when started through npm (npx, npm exec, npm run), whatever PATH npm set', () => {
    const links = { '/home/u/rouse/node_modules/.bin/rouse': BIN };
    expect(
      rouseCommand(input({ env: { npm_command: 'exec', PATH: '/home/u/rouse/node_modules/.bin' } }, links)),
    ).toBe('npx rouse');
    expect(rouseCommand(input({ env: { npm_command: 'run-script' } }, links))).toBe('npx rouse');
  });

  it('rouse when that name on PATH is this CLI', () => {
    expect(rouseCommand(input({}, { '/usr/local/bin/rouse': BIN }))).toBe('rouse');
  });

  it('npx rouse from a clone or a project with it in node_modules (here or above), even if another rouse is on PATH', () => {
    const links = { '/home/u/rouse/node_modules/.bin/rouse': BIN, '/usr/bin/rouse': '/opt/other/rouse.js' };
    expect(rouseCommand(input({}, links))).toBe('npx rouse');
    expect(rouseCommand(input({ cwd: '/home/u/rouse/packages/sdk' }, links))).toBe('npx rouse');
  });

  it('node <script> otherwise, relative when under the working directory', () => {
    expect(rouseCommand(input({}))).toBe('node packages/server/bin/rouse.js');
    expect(rouseCommand(input({ cwd: '/tmp' }))).toBe(`node ${BIN}`);
    expect(rouseCommand(input({ cwd: '/tmp', script: '/my dir/rouse.js', realpath: (p) => p }))).toBe(
      "node '/my dir/rouse.js'",
    );
  });

  it('quotes a word for the shell only when it must', () => {
    expect(shellQuote('/tmp/rouse-1')).toBe('/tmp/rouse-1');
    expect(shellQuote("it's here")).toBe("'it'\\''s here'");
  });
});
