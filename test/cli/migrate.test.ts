/**
 * `rouse migrate` on SQLite and PostgreSQL (a fresh schema); the store flags of `rouse serve`
 * refusing what does not make sense; what both say when a PostgreSQL store cannot be opened; and the
 * token warning of a coordinator on a shared store.
 */
import { type AddressInfo, connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../harness/ports.mjs';
import { databaseUrl, type FreshSchema, freshSchema } from '../harness/postgres.js';
import { tempDir } from '../harness/temp-dir.js';
import { bannerOf, runCli } from './run-cli.js';

const schemas: FreshSchema[] = [];
afterAll(async () => {
  for (const s of schemas) await s.drop();
});

describe('rouse migrate', () => {
  it('SQLite: --status reports pending (exit 1), migrate applies them, then --status is up to date', async () => {
    const cwd = tempDir('rouse-migrate-');
    const missing = await runCli(['migrate', '--status', '--data-dir', join(cwd, 'data')], { cwd });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no SQLite database/);

    const applied = await runCli(['migrate', '--json', '--data-dir', join(cwd, 'data')], { cwd });
    expect(applied.code).toBe(0);
    const report = JSON.parse(applied.stdout) as {
      fromVersion: number;
      toVersion: number;
      applied: string[];
    };
    expect(report.fromVersion).toBe(0);
    expect(report.applied).toContain('0002_lease_shards');

    const status = await runCli(['migrate', '--status', '--json', '--db', join(cwd, 'data', 'rouse.db')], {
      cwd,
    });
    expect(status.code).toBe(0);
    const s = JSON.parse(status.stdout) as {
      databaseVersion: number;
      codeVersion: number;
      pending: string[];
    };
    expect(s.pending).toEqual([]);
    expect(s.databaseVersion).toBe(s.codeVersion);
  });

  it('PostgreSQL: migrates a fresh schema once; --status agrees', async () => {
    const pg = await freshSchema('cli_migrate');
    schemas.push(pg);
    const cwd = tempDir('rouse-migrate-pg-');
    const args = ['--store', pg.connectionString, '--pg-schema', pg.schema];
    const before = await runCli(['migrate', '--status', '--json', ...args], { cwd });
    expect(before.code).toBe(1);
    expect(JSON.parse(before.stdout)).toMatchObject({ databaseVersion: 0 });

    const first = await runCli(['migrate', ...args], { cwd });
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/migrated from version 0/);
    const again = await runCli(['migrate', ...args], { cwd });
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/up to date/);
    expect(again.stdout).not.toContain('postgres:postgres@'); // no password in the output

    const after = await runCli(['migrate', '--status', '--json', ...args], { cwd });
    expect(after.code).toBe(0);
    expect(JSON.parse(after.stdout)).toMatchObject({ pending: [] });
  });

  it('serve: PostgreSQL flags without a PostgreSQL store, and a bad --store, are usage errors', async () => {
    const cwd = tempDir('rouse-serve-flags-');
    const noStore = await runCli(['serve', '--port', '0', '--pool-size', '4'], { cwd });
    expect(noStore.code).toBe(2);
    expect(noStore.stderr).toMatch(/--pool-size needs a PostgreSQL store/);
    const bad = await runCli(['serve', '--port', '0', '--store', 'mysql://x'], { cwd });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--store must be a postgres:\/\/ URL/);
  });

  it('serve and migrate: a PostgreSQL store that cannot be opened says which server and what to check (serve 1, migrate 3)', async () => {
    const cwd = tempDir('rouse-serve-pg-fail-');
    const env = { ROUSE_ADMIN_TOKEN: 'admin-token-0123456789', ROUSE_AGENT_TOKEN: 'agent-token-0123456789' };
    const base = new URL(databaseUrl());
    const at = (u: URL) => `PostgreSQL at ${u.hostname}:${u.port || '5432'}`;

    const closed = new URL(base);
    closed.hostname = '127.0.0.1';
    closed.port = String(await freePort());
    const refused = await runCli(
      ['serve', '--port', '0', '--store-wait', '1s', '--store', closed.toString()],
      {
        cwd,
        env,
      },
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`cannot reach ${at(closed)} (ECONNREFUSED)`);
    expect(refused.stderr).toContain('(gave up after 1s: --store-wait)');
    expect(refused.stdout).toMatch(/waiting for the store to become reachable/);

    const noUser = new URL(base);
    noUser.username = 'rouse_no_such_user';
    noUser.password = 'not-the-password';
    const refusedUser = await runCli(['migrate', '--store', noUser.toString()], { cwd });
    // 3, not 1: `migrate --status` says "pending" with 1.
    expect(refusedUser.code).toBe(3);
    expect(refusedUser.stderr).toMatch(
      /refused user "rouse_no_such_user" \(28[0-9A-Z]{3}: .*check the user and password/,
    );
    expect(refusedUser.stderr).not.toContain('not-the-password');

    const noDatabase = new URL(base);
    noDatabase.pathname = '/rouse_no_such_database';
    const missing = await runCli(['serve', '--port', '0', '--store', noDatabase.toString()], { cwd, env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`${at(noDatabase)} has no database "rouse_no_such_database" (3D000)`);

    const unparsable = await runCli(['serve', '--port', '0', '--store', 'postgres://u:secret@:::x'], {
      cwd,
      env,
    });
    expect(unparsable.code).toBe(2);
    expect(unparsable.stderr).toMatch(/--store is not a valid URL: expected postgres:\/\/user:password@host/);
    expect(unparsable.stderr).not.toContain('secret');

    // Something that is not PostgreSQL takes the connection and closes it.
    const hangUp = createServer((socket) => socket.destroy());
    await new Promise<void>((r) => hangUp.listen(0, '127.0.0.1', r));
    const notPg = new URL(base);
    notPg.hostname = '127.0.0.1';
    notPg.port = String((hangUp.address() as AddressInfo).port);
    try {
      const status = await runCli(['migrate', '--status', '--store', notPg.toString()], { cwd });
      expect(status.code).toBe(3);
      expect(status.stderr).toContain(`${at(notPg)} closed the connection before answering`);
      const waited = await runCli(
        ['serve', '--port', '0', '--store-wait', '1s', '--store', notPg.toString()],
        {
          cwd,
          env,
        },
      );
      expect(waited.code).toBe(1);
      expect(waited.stderr).toContain('closed the connection before answering');
      expect(waited.stderr).toContain('(gave up after 1s: --store-wait)');
    } finally {
      await new Promise((r) => hangUp.close(r));
    }
    const badSchema = await runCli(
      ['migrate', '--status', '--store', base.toString(), '--pg-schema', 'bad-schema;x'],
      {
        cwd,
      },
    );
    expect(badSchema.code).toBe(2);
    expect(badSchema.stderr).toContain('--pg-schema: "bad-schema;x" is not a schema name');
  });

  it('serve: a token from the environment that is too short is named by its variable (exit 2)', async () => {
    const cwd = tempDir('rouse-serve-token-');
    const short = await runCli(['serve', '--port', '0', '--db', ':memory:'], {
      cwd,
      env: { ROUSE_ADMIN_TOKEN: 'short' },
    });
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/ROUSE_ADMIN_TOKEN must be at least 16 characters/);
  });

  it("serve on PostgreSQL warns when a token is this host's own, and not when all come from the environment", async () => {
    const pg = await freshSchema('cli_tokens');
    schemas.push(pg);
    const cwd = tempDir('rouse-serve-pg-tokens-');
    const args = ['serve', '--port', '0', '--store', pg.connectionString, '--pg-schema', pg.schema];
    const env = { ROUSE_ADMIN_TOKEN: 'admin-token-0123456789', ROUSE_AGENT_TOKEN: 'agent-token-0123456789' };
    const partly = await bannerOf(args, { cwd, env });
    expect(partly).toMatch(
      /warning: the readonly token\(s\) come from this host's data directory; .* Set ROUSE_READONLY_TOKEN to the same values/,
    );
    const all = await bannerOf(args, { cwd, env: { ...env, ROUSE_READONLY_TOKEN: 'read-token-0123456789' } });
    expect(all).toMatch(/Press Ctrl-C to stop/);
    expect(all).not.toMatch(/warning/);
  });

  it('serve waits for a PostgreSQL store that is not up yet (--store-wait), then starts', async () => {
    const pg = await freshSchema('cli_wait');
    schemas.push(pg);
    const cwd = tempDir('rouse-serve-wait-');
    const real = new URL(pg.connectionString);
    // The "database" comes up once the coordinator has been refused and waits: a forwarder to the real one.
    const late = new URL(pg.connectionString);
    late.hostname = '127.0.0.1';
    late.port = String(await freePort());
    const args = [
      'serve',
      '--port',
      '0',
      '--store-wait',
      '20s',
      '--store',
      late.toString(),
      '--pg-schema',
      pg.schema,
    ];
    const open = () => {
      forwarder = createServer((client) => {
        const upstream = connect(Number(real.port || 5432), real.hostname);
        client.pipe(upstream).pipe(client);
        const drop = () => {
          client.destroy();
          upstream.destroy();
        };
        client.on('error', drop);
        upstream.on('error', drop);
      }).listen(Number(late.port), '127.0.0.1');
    };
    let forwarder: Server | undefined;
    try {
      const env = {
        ROUSE_ADMIN_TOKEN: 'admin-token-0123456789',
        ROUSE_AGENT_TOKEN: 'agent-token-0123456789',
        ROUSE_READONLY_TOKEN: 'read-token-0123456789',
      };
      const out = await bannerOf(args, {
        cwd,
        env,
        onOutput: (soFar) => {
          if (!forwarder && soFar.includes('waiting for the store to become reachable')) open();
        },
      });
      expect(out).toMatch(/waiting for the store to become reachable/);
      expect(out).toContain(`cannot reach PostgreSQL at 127.0.0.1:${late.port} (ECONNREFUSED)`);
      expect(out).toMatch(/coordinator listening on http:\/\/127\.0\.0\.1:\d+/);
    } finally {
      await new Promise((r) => (forwarder ? forwarder.close(r) : r(undefined)));
    }
  });
});
