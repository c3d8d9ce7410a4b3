/**
 * `rouse dashboard` with the real binary against a coordinator on 127.0.0.1: it prints a one-time
 * login URL that signs a browser in once; --readonly and --json; a read-only token may not mint one.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, TOKENS } from '../../packages/server/src/test-support/api-harness.js';
import { runCli } from './run-cli.js';

let dir: string;
let h: Harness;
let url: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rouse-cli-dashboard-'));
  h = await createHarness();
  url = await h.app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await h.close();
  await rm(dir, { recursive: true, force: true });
});

describe('rouse dashboard', () => {
  it('prints a login URL that signs in once', async () => {
    const r = await runCli(['dashboard', '--url', url, '--token', TOKENS.admin], { cwd: dir });
    expect(r.code).toBe(0);
    const printed = r.stdout.trim();
    expect(printed).toMatch(new RegExp(`^${url}/login\\?once=[A-Za-z0-9_-]{40,}$`));
    expect(printed).not.toContain(TOKENS.admin);
    const first = await fetch(printed, { redirect: 'manual' });
    expect(first.status).toBe(200);
    expect(first.headers.get('set-cookie')).toMatch(/^rouse_session=/);
    expect((await fetch(printed, { redirect: 'manual' })).status).toBe(401);
  });

  it('--readonly --json gives a read-only code; a read-only token may not mint one', async () => {
    const r = await runCli(['dashboard', '--readonly', '--json', '--url', url, '--token', TOKENS.admin], {
      cwd: dir,
    });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { url: string; role: string; expiresAt: number };
    expect(out.role).toBe('readonly');
    const res = await fetch(out.url, { redirect: 'manual' });
    const cookie = String(res.headers.get('set-cookie')).split(';')[0]!;
    const page = await fetch(`${url}/`, { headers: { cookie } });
    expect(await page.text()).toContain('read-only');

    const refused = await runCli(['dashboard', '--url', url, '--token', TOKENS.readonly], { cwd: dir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('forbidden');
  });
});
