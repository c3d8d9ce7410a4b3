/**
 * TLS to PostgreSQL, end to end: a private server that takes only TLS connections (pg_hba.conf
 * `hostssl`) with a certificate from a test CA (test/fixtures/tls). `--pg-ssl-ca` verifies it;
 * `--pg-ssl` against the system CAs refuses it; `--pg-ssl-insecure` skips the check; without TLS the
 * server refuses the connection, so every success here went over TLS.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrivatePostgres, privatePostgres } from '../harness/postgres.js';
import { tempDir } from '../harness/temp-dir.js';
import { bannerOf, runCli } from './run-cli.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/tls/${name}`, import.meta.url));
const CA = fixture('ca.pem');

let server: PrivatePostgres;
beforeAll(async () => {
  server = await privatePostgres({
    tls: { certFile: fixture('server.pem'), keyFile: fixture('server.key'), require: true },
  });
});
afterAll(async () => {
  await server?.destroy();
});

describe('PostgreSQL over TLS', () => {
  it('migrate: --pg-ssl-ca verifies the server; --pg-ssl alone refuses its private CA; no TLS is refused', async () => {
    const cwd = tempDir('rouse-tls-');
    const store = ['--store', server.url, '--pg-schema', 'rouse_tls'];

    const plain = await runCli(['migrate', ...store], { cwd });
    expect(plain.code).toBe(3); // the store cannot be opened
    expect(plain.stderr).toMatch(/takes only TLS connections \(28000: .*no encryption\): pass --pg-ssl/);

    const systemCas = await runCli(['migrate', ...store, '--pg-ssl'], { cwd });
    expect(systemCas.code).toBe(3);
    expect(systemCas.stderr).toMatch(/TLS to PostgreSQL at 127\.0\.0\.1:\d+ failed: .*certificate/);

    const verified = await runCli(['migrate', ...store, '--pg-ssl-ca', CA], { cwd });
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/migrated from version 0/);

    const insecure = await runCli(['migrate', '--status', ...store, '--pg-ssl-insecure'], { cwd });
    expect(insecure.code).toBe(0);
  });

  it('serve: a coordinator runs on it with --pg-ssl-ca', async () => {
    const cwd = tempDir('rouse-tls-serve-');
    const out = await bannerOf(
      ['serve', '--port', '0', '--store', server.url, '--pg-schema', 'rouse_tls_serve', '--pg-ssl-ca', CA],
      {
        cwd,
        env: {
          ROUSE_ADMIN_TOKEN: 'admin-token-0123456789',
          ROUSE_AGENT_TOKEN: 'agent-token-0123456789',
          ROUSE_READONLY_TOKEN: 'read-token-0123456789',
        },
      },
    );
    expect(out).toMatch(/coordinator listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(out).not.toMatch(/error/i);
  });
});
