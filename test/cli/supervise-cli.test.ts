/**
 * `rouse supervise` as a user meets it before anything runs: its help, a bad config refused with the
 * file and field of every error (exit 2), a missing config file, an unreachable coordinator (exit 3),
 * and a refused token (exit 1, pointing at ROUSE_AGENT_TOKEN, the only token it reads).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCoordinatorProcess } from '../harness/coordinator-process.js';
import { freePort } from '../harness/ports.mjs';
import { tempDir } from '../harness/temp-dir.js';
import { runCli } from './run-cli.js';

describe('rouse supervise (CLI)', () => {
  it('documents its config in --help', async () => {
    const r = await runCli(['supervise', '--help'], { cwd: tempDir() });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('-c, --config <file>');
    expect(r.stdout).toContain('ROUSE_AGENT_KEY');
    expect(r.stdout).toContain('restart: { backoff: 1s, max_backoff: 5m');
  });

  it('refuses a bad config with the file and field of every error (exit 2)', async () => {
    const dir = tempDir();
    const file = join(dir, 'host.yaml');
    writeFileSync(
      file,
      'name: h\nprograms:\n  - name: p\n    command: ["x"]\n    instances: 0\n    stop: { grace: soon }\n',
    );
    const r = await runCli(['supervise', '-c', file], {
      cwd: dir,
      env: { ROUSE_URL: 'http://127.0.0.1:1', ROUSE_AGENT_TOKEN: 'enroll-token' },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}: programs.0.instances: must be an integer from 1 to 10000`);
    expect(r.stderr).toContain(`${file}: programs.0.stop.grace: expected a duration`);
    // a config file that is not there is a bad config too (exit 2), named in the message
    const missing = await runCli(['supervise', '-c', join(dir, 'nope.yaml')], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`${join(dir, 'nope.yaml')}: cannot read it: ENOENT`);
  });

  it('exits 3 when the coordinator cannot be reached, starting no child', async () => {
    const dir = tempDir();
    const file = join(dir, 'host.yaml');
    const marker = join(dir, 'started');
    writeFileSync(file, `name: h\nprograms:\n  - name: p\n    command: "touch ${marker}; sleep 60"\n`);
    const r = await runCli(['supervise', '-c', file], {
      cwd: dir,
      env: { ROUSE_URL: `http://127.0.0.1:${await freePort()}`, ROUSE_AGENT_TOKEN: 'enroll-token' },
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('cannot reach the coordinator');
    expect(existsSync(marker)).toBe(false);
  });

  it('a refused token points at ROUSE_AGENT_TOKEN (the enrollment token), not at --token (exit 1)', async () => {
    const coord = await startCoordinatorProcess();
    try {
      const dir = tempDir();
      const file = join(dir, 'host.yaml');
      writeFileSync(file, `name: h\nprograms:\n  - name: p\n    command: "sleep 60"\n    sdk: false\n`);
      const r = await runCli(['supervise', '-c', file], {
        cwd: dir,
        env: { ROUSE_URL: coord.url, ROUSE_AGENT_TOKEN: 'rsk_enroll_not-this-one' },
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('(unauthorized)');
      expect(r.stderr).toContain('check ROUSE_AGENT_TOKEN');
      expect(r.stderr).toContain('the enrollment token');
      expect(r.stderr).not.toContain('--token');
    } finally {
      await coord.kill('SIGTERM');
    }
  });
});
