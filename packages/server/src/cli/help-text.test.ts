/**
 * The help of every command and subcommand, read from the program itself: each command and option
 * is described, and a default is stated once (an option whose description names its default has
 * no default of commander's too, which would print it a second time, quoted).
 */
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { CliContext } from './context.js';
import { buildProgram } from './main.js';

function allCommands(root: Command): Command[] {
  return [root, ...root.commands.flatMap((c) => allCommands(c))];
}

const commandPath = (c: Command): string => {
  const names: string[] = [];
  for (let p: Command | null = c; p !== null; p = p.parent) names.unshift(p.name());
  return names.join(' ');
};

const ctx = new CliContext(
  {
    io: { out: () => undefined, err: () => undefined, isTTY: false, color: false },
    env: {},
    cwd: '/',
    now: () => 0,
    onInterrupt: () => () => undefined,
  },
  '0.0.0',
);
const commands = allCommands(buildProgram(ctx)).filter((c) => c.name() !== 'help');

describe('the CLI help', () => {
  it('covers every command', () => {
    expect(commands.map(commandPath)).toEqual(
      expect.arrayContaining(['rouse serve', 'rouse agent show', 'rouse policy check', 'rouse alerts']),
    );
  });

  it('describes every command and every option', () => {
    const missing = commands.flatMap((c) => [
      ...(c.description() === '' ? [commandPath(c)] : []),
      ...c.options.filter((o) => o.description === '').map((o) => `${commandPath(c)} ${o.flags}`),
    ]);
    expect(missing).toEqual([]);
  });

  it('states each default once', () => {
    const twice = commands.flatMap((c) =>
      c.options
        .filter((o) => o.defaultValue !== undefined && /\bdefault\b/i.test(o.description))
        .map((o) => `${commandPath(c)} ${o.flags}`),
    );
    expect(twice).toEqual([]);
  });
});
