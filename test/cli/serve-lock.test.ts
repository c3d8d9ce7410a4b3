/**
 * One `rouse serve` per SQLite database: a second one on the same data directory is refused, naming
 * the first; `rouse migrate --status` still reads the database meanwhile; a coordinator that was
 * SIGKILLed leaves nothing behind that stops the next one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CoordinatorProcess, startCoordinatorProcess } from '../harness/coordinator-process.js';
import { tempDir } from '../harness/temp-dir.js';
import { runCli } from './run-cli.js';

let coord: CoordinatorProcess | undefined;
afterAll(async () => {
  await coord?.kill('SIGTERM');
});

describe('rouse serve on a data directory another coordinator serves', () => {
  it('is refused, naming the one serving; after a SIGKILL of that one, the next starts', async () => {
    coord = await startCoordinatorProcess();
    const { dataDir } = coord;
    const first = JSON.parse(readFileSync(join(dataDir, 'server.json'), 'utf8')) as {
      pid: number;
      url: string;
    };
    const cwd = tempDir('rouse-serve-lock-');

    const second = await runCli(['serve', '--data-dir', dataDir, '--port', '0'], { cwd });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(
      `another coordinator (pid ${first.pid}, ${coord.url}) is serving the SQLite database ${join(dataDir, 'rouse.db')}`,
    );
    expect(second.stderr).toContain('--data-dir');
    // The refused one did not take the directory over: server.json still names the first.
    expect(JSON.parse(readFileSync(join(dataDir, 'server.json'), 'utf8'))).toMatchObject(first);

    const status = await runCli(['migrate', '--status', '--data-dir', dataDir], { cwd });
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('up to date');

    await coord.kill('SIGKILL');
    await coord.restart();
    const res = await fetch(`${coord.url}/readyz`);
    expect(res.ok).toBe(true);
  });
});
