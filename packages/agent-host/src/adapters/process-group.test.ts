import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { alive } from '../test-support/processes.js';
import { ProcessGroup } from './process-group.js';

const groups: ProcessGroup[] = [];
afterEach(async () => {
  for (const g of groups.splice(0)) await g.stop({ graceMs: 0 });
});

function start(script: string, extra: Partial<Parameters<typeof ProcessGroup.spawn>[0]> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const g = ProcessGroup.spawn({
    file: process.execPath,
    args: ['-e', script],
    cwd: tmpdir(),
    env: process.env,
    onStdout: (l) => out.push(l),
    onStderr: (l) => err.push(l),
    ...extra,
  });
  groups.push(g);
  return { g, out, err };
}

async function waitForLine(lines: string[], re: RegExp): Promise<string> {
  for (let i = 0; i < 400; i++) {
    const l = lines.find((x) => re.test(x));
    if (l !== undefined) return l;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`no line matching ${re} in ${JSON.stringify(lines)}`);
}

// Starts a grandchild `sleep` (its own pid printed), then waits; SIGTERM is ignored when asked.
const PARENT_WITH_SLEEP = (ignoreTerm: boolean) => `
  const { spawn } = require('node:child_process');
  ${ignoreTerm ? "process.on('SIGTERM', () => console.log('ignoring SIGTERM'));" : ''}
  const c = spawn('sleep', ['300'], { stdio: 'ignore' });
  console.log('grandchild ' + c.pid);
  setInterval(() => {}, 1000);
`;

describe('ProcessGroup', () => {
  it('reads stdout and stderr line by line, keeps a last line without a newline, and reports the exit code', async () => {
    const { g, out, err } = start(
      "process.stdout.write('a\\nb\\r\\nc'); process.stderr.write('oops\\n'); process.exitCode = 3;",
    );
    const exit = await g.exited;
    expect(exit).toEqual({ code: 3, signal: null });
    expect(out).toEqual(['a', 'b', 'c']);
    expect(err).toEqual(['oops']);
    expect(g.running).toBe(false);
  });

  it('gives stdin from /dev/null by default and the given input otherwise', async () => {
    const read =
      "let s=''; process.stdin.on('data', d => s += d); process.stdin.on('end', () => console.log('[' + s + ']'));";
    const a = start(read);
    await a.g.exited;
    expect(a.out).toEqual(['[]']);
    const b = start(read, { stdin: 'hello' });
    await b.g.exited;
    expect(b.out).toEqual(['[hello]']);
  });

  it('stop kills the whole group: a grandchild sleep goes with its parent', async () => {
    const { g, out } = start(PARENT_WITH_SLEEP(false));
    const pid = Number((await waitForLine(out, /^grandchild /)).split(' ')[1]);
    expect(alive(pid)).toBe(true);
    const exit = await g.stop({ graceMs: 2000 });
    expect(exit).toEqual({ code: null, signal: 'SIGTERM' });
    expect(alive(pid)).toBe(false);
    expect(g.groupAlive()).toBe(false);
    expect(g.sent).toEqual(['SIGTERM']);
  });

  it('stop also reaches a descendant that left the group for a session of its own (setsid)', async () => {
    const { g, out } = start(`
      const { spawn } = require('node:child_process');
      const c = spawn('setsid', ['sleep', '300'], { stdio: 'ignore' });
      console.log('grandchild ' + c.pid);
      setInterval(() => {}, 1000);
    `);
    const pid = Number((await waitForLine(out, /^grandchild /)).split(' ')[1]);
    for (let i = 0; i < 100 && readFileSync(`/proc/${pid}/stat`, 'utf8').includes('(setsid)'); i++)
      await new Promise((r) => setTimeout(r, 20)); // setsid execs sleep
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    expect(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2])).not.toBe(g.pid); // another group
    await g.stop({ graceMs: 500 });
    expect(alive(pid)).toBe(false);
  });

  it('stop is signal, then grace, then SIGKILL to the group when the leader ignores the signal', async () => {
    const { g, out } = start(PARENT_WITH_SLEEP(true));
    const pid = Number((await waitForLine(out, /^grandchild /)).split(' ')[1]);
    const exit = await g.stop({ signal: 'SIGTERM', graceMs: 300 });
    // the exit event says how it ended, not child.killed
    expect(exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(out).toContain('ignoring SIGTERM');
    expect(g.sent).toEqual(['SIGTERM', 'SIGKILL']);
    expect(alive(pid)).toBe(false);
  });

  it('a grandchild left behind after a normal exit is killed by killRemainder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pg-'));
    const { g, out } = start(
      "const { spawn } = require('node:child_process'); const c = spawn('sleep', ['300'], { stdio: 'ignore', detached: false }); c.unref(); console.log('grandchild ' + c.pid);",
      { cwd: dir },
    );
    const exit = await g.exited;
    expect(exit.code).toBe(0);
    const pid = Number((await waitForLine(out, /^grandchild /)).split(' ')[1]);
    expect(alive(pid)).toBe(true);
    g.killRemainder();
    await g.stop({ graceMs: 0 });
    expect(alive(pid)).toBe(false);
  });

  it('signalLeader reaches the leader only', async () => {
    const { g, out } = start(
      `process.on('SIGINT', () => { console.log('interrupted'); process.exit(0); }); ${PARENT_WITH_SLEEP(false)}`,
    );
    const pid = Number((await waitForLine(out, /^grandchild /)).split(' ')[1]);
    expect(g.signalLeader('SIGINT')).toBe(true);
    expect(await g.exited).toEqual({ code: 0, signal: null });
    expect(out).toContain('interrupted');
    expect(alive(pid)).toBe(true); // not sent to the group
    g.killRemainder();
    await g.stop({ graceMs: 0 });
    expect(alive(pid)).toBe(false);
  });

  it('a missing executable resolves exited with spawnError, and signals are no-ops', async () => {
    const g = ProcessGroup.spawn({ file: '/nonexistent/cli', args: [], cwd: tmpdir(), env: process.env });
    const exit = await g.exited;
    expect(exit.code).toBeNull();
    expect(exit.signal).toBeNull();
    expect(exit.spawnError).toMatch(/ENOENT/);
    expect(g.signal('SIGTERM')).toBe(false);
    expect(await g.stop()).toBe(exit);
  });
});
