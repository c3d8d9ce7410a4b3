/**
 * `rouse serve` and the process that started it, with real processes. Under `npx` (npm exec → sh →
 * node) a SIGTERM to npx is not passed on to the coordinator; it notices that its parent went and
 * shuts down gracefully. Started by anything else it stays when its parent goes (`nohup rouse serve &`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../harness/temp-dir.js';
import { waitFor } from '../harness/wait.js';
import { cleanEnv, ROUSE_BIN } from './run-cli.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NEXT_TO_NODE = join(dirname(process.execPath), 'npx');
const NPX = existsSync(NEXT_TO_NODE) ? NEXT_TO_NODE : 'npx';

/** Has the process ended? (A zombie nobody reaped yet counts as ended.) */
function gone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    // no /proc entry (or no /proc): ask the kernel
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function serverPid(dataDir: string): number | false {
  try {
    return (JSON.parse(readFileSync(join(dataDir, 'server.json'), 'utf8')) as { pid: number }).pid;
  } catch {
    return false;
  }
}

function collect(child: ChildProcess): () => string {
  let out = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    out += d;
  });
  return () => out;
}

function killAll(child: ChildProcess, pid: number | false): void {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (pid !== false && !gone(pid)) process.kill(pid, 'SIGKILL');
}

describe('rouse serve and the process that started it', () => {
  it('npx rouse serve: the banner says npx rouse, and a SIGTERM to npx stops the coordinator gracefully', async () => {
    const dataDir = tempDir('rouse-npx-serve-');
    const npx = spawn(NPX, ['rouse', 'serve', '--port', '0', '--data-dir', dataDir], {
      cwd: ROOT,
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = collect(npx);
    let pid: number | false = false;
    try {
      pid = await waitFor(() => serverPid(dataDir), { timeoutMs: 30_000, what: `server.json\n${output()}` });
      expect(pid).not.toBe(npx.pid); // the coordinator runs under npm, not as npx itself
      await waitFor(() => output().includes('Press Ctrl-C to stop.'), { what: 'the banner' });
      expect(output()).toMatch(/try:\s+npx rouse submit hello '\{"n":1\}' --data-dir \S+ && npx rouse tasks/);

      npx.kill('SIGTERM');
      const coordinator = pid;
      await waitFor(() => gone(coordinator), {
        timeoutMs: 15_000,
        what: `coordinator ${coordinator} to exit`,
      });
      // a clean shutdown removes server.json and says why it stopped
      expect(existsSync(join(dataDir, 'server.json'))).toBe(false);
      expect(output()).toContain('the process that started rouse serve has exited; shutting down');
    } finally {
      killAll(npx, pid);
    }
  });

  it('started by anything else, it stays when its parent exits', async () => {
    const dataDir = tempDir('rouse-orphan-serve-');
    // sh starts the coordinator in the background and exits at once: the coordinator is orphaned
    const sh = spawn(
      '/bin/sh',
      ['-c', `"${process.execPath}" "${ROUSE_BIN}" serve --port 0 --data-dir "${dataDir}" >/dev/null 2>&1 &`],
      { cwd: dataDir, env: cleanEnv(), stdio: 'ignore' },
    );
    let pid: number | false = false;
    try {
      pid = await waitFor(() => serverPid(dataDir), { timeoutMs: 30_000, what: 'server.json' });
      await waitFor(() => sh.exitCode !== null, { what: 'sh to exit' });
      await new Promise((r) => setTimeout(r, 1500)); // three times the parent check of an npm start
      expect(gone(pid)).toBe(false);
      expect(serverPid(dataDir)).toBe(pid);
      process.kill(pid, 'SIGTERM');
      const coordinator = pid;
      await waitFor(() => gone(coordinator), {
        timeoutMs: 15_000,
        what: `coordinator ${coordinator} to exit`,
      });
    } finally {
      killAll(sh, pid);
    }
  });
});
