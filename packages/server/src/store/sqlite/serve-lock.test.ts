import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RouseError } from '../../core/errors.js';
import { lockSqliteForServing, serveLockFile } from './serve-lock.js';

const DRIVER = createRequire(import.meta.url).resolve('better-sqlite3');

/** Why taking the lock failed (null when it was taken, and then given up). */
function refusal(path: string, holder?: () => string | null): RouseError | null {
  try {
    lockSqliteForServing(path, holder).release();
    return null;
  } catch (err) {
    if (err instanceof RouseError) return err;
    throw err;
  }
}

describe('the serving lock of a SQLite database', () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rouse-serve-lock-'));
    path = join(dir, 'rouse.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is held by one coordinator at a time, and free again once released', () => {
    const first = lockSqliteForServing(path);
    expect(first.file).toBe(serveLockFile(path));
    const err = refusal(path, () => 'pid 123, http://127.0.0.1:7070');
    expect(err?.code).toBe('conflict');
    expect(err?.message).toContain(
      `another coordinator (pid 123, http://127.0.0.1:7070) is serving the SQLite database ${path}`,
    );
    expect(err?.details).toEqual({ path, lockFile: serveLockFile(path) });
    // Without a known holder the message says so plainly.
    expect(refusal(path)?.message).toMatch(/^another coordinator is serving/);
    first.release();
    first.release(); // idempotent
    expect(refusal(path)).toBeNull();
  });

  it('is freed when the process holding it is SIGKILLed: a restart after a crash does not wait', async () => {
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `const D = require(${JSON.stringify(DRIVER)});
         const db = new D(${JSON.stringify(serveLockFile(path))}, { timeout: 0 });
         db.pragma('locking_mode = EXCLUSIVE');
         db.exec('BEGIN EXCLUSIVE');
         process.stdout.write('held\\n');
         setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout.on('data', (d: Buffer) => d.toString().includes('held') && resolve());
        holder.once('exit', (code) => reject(new Error(`the holder exited first (${code})`)));
      });
      expect(refusal(path)?.code).toBe('conflict');
    } finally {
      holder.kill('SIGKILL');
      await new Promise((r) => holder.once('exit', r));
    }
    expect(refusal(path)).toBeNull();
  });

  it('a file that cannot be opened is `unavailable`, naming it', () => {
    const err = refusal(join(dir, 'missing', 'rouse.db'));
    expect(err?.code).toBe('unavailable');
    expect(err?.message).toMatch(
      /^cannot open the SQLite database .*missing\/rouse\.db \(its lock file .*missing\/rouse\.db-serve\.lock\)/,
    );
  });
});
