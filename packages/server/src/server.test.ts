import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveRouseServerOptions, startRouseServer } from './server.js';

const logger = pino({ level: 'silent' });
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rouse-server-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('startRouseServer', () => {
  it("names each log line's component once (no key repeated by nested loggers)", async () => {
    const lines: string[] = [];
    const capture = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const server = await startRouseServer({
      port: 0,
      dataDir: join(dir, 'logs'),
      db: ':memory:',
      logger: capture,
    });
    await server.close();
    const components = lines.map((line) => line.match(/"component":/g)?.length ?? 0);
    expect(lines.length).toBeGreaterThan(3);
    expect(Math.max(...components)).toBe(1);
    const named = lines.map((line) => (JSON.parse(line) as { component?: string }).component);
    expect(named).toContain('coordinator');
    expect(named).toContain('shards'); // a part's own child logger
  });

  it('generates tokens with mode 0600, reuses them on restart, and keeps the database', async () => {
    const dataDir = join(dir, 'data');
    const first = await startRouseServer({ port: 0, dataDir, logger });
    try {
      expect(first.adminToken).toMatch(/^rsk_admin_[A-Za-z0-9_-]{43}$/);
      expect(first.agentToken).toMatch(/^rsk_enroll_[A-Za-z0-9_-]{43}$/);
      expect(first.readonlyToken).toMatch(/^rsk_read_[A-Za-z0-9_-]{43}$/);
      expect(first.tokenFiles.admin).toBe(join(dataDir, 'admin.token'));
      for (const file of Object.values(first.tokenFiles)) {
        expect(((await stat(file as string)).mode & 0o777).toString(8)).toBe('600');
      }
      expect(((await stat(dataDir)).mode & 0o777).toString(8)).toBe('700');
      expect((await readFile(first.tokenFiles.admin as string, 'utf8')).trim()).toBe(first.adminToken);
      const res = await fetch(`${first.url}/v1/tasks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${first.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'keep' }),
      });
      expect(res.status).toBe(201);
    } finally {
      await first.close();
    }
    const second = await startRouseServer({ port: 0, dataDir, logger });
    try {
      expect(second.adminToken).toBe(first.adminToken);
      expect(second.agentToken).toBe(first.agentToken);
      expect(second.readonlyToken).toBe(first.readonlyToken);
      const res = await fetch(`${second.url}/v1/tasks`, {
        headers: { authorization: `Bearer ${second.readonlyToken}` },
      });
      expect(
        ((await res.json()) as { tasks: { type: string }[] }).tasks.map((t: { type: string }) => t.type),
      ).toEqual(['keep']);
    } finally {
      await second.close();
    }
  });

  it('writes server.json while running and removes it on close', async () => {
    const server = await startRouseServer({ port: 0, dataDir: dir, db: ':memory:', logger });
    const file = join(dir, 'server.json');
    try {
      const info = JSON.parse(await readFile(file, 'utf8'));
      expect(info).toEqual({
        url: server.url,
        pid: process.pid,
        startedAt: expect.any(Number),
        version: expect.any(String),
      });
      expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
      const health = await fetch(`${server.url}/healthz`);
      expect(await health.json()).toEqual({ ok: true });
    } finally {
      await server.close();
    }
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
  });

  it('uses explicit tokens without writing token files', async () => {
    const server = await startRouseServer({
      port: 0,
      dataDir: dir,
      db: ':memory:',
      logger,
      adminToken: 'my-admin-token-0123456789',
      agentToken: 'my-agent-token-0123456789',
      readonlyToken: 'my-read-token-0123456789',
    });
    try {
      expect(server.tokenFiles).toEqual({ admin: null, agent: null, readonly: null });
      await expect(stat(join(dir, 'admin.token'))).rejects.toThrow(/ENOENT/);
      const res = await fetch(`${server.url}/v1/agents`, {
        headers: { authorization: 'Bearer my-admin-token-0123456789' },
      });
      expect(res.status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('fails cleanly when the port is taken, leaving no server.json', async () => {
    const a = await startRouseServer({ port: 0, dataDir: join(dir, 'a'), db: ':memory:', logger });
    try {
      await expect(
        startRouseServer({ port: a.port, dataDir: join(dir, 'b'), db: ':memory:', logger }),
      ).rejects.toMatchObject({ code: 'EADDRINUSE' });
      await expect(stat(join(dir, 'b', 'server.json'))).rejects.toThrow(/ENOENT/);
    } finally {
      await a.close();
    }
  });
});

describe('resolveRouseServerOptions', () => {
  it('fills documented defaults', () => {
    const o = resolveRouseServerOptions({ logger });
    expect(o).toMatchObject({ port: 7070, host: '127.0.0.1', logLevel: 'info', metricsPublic: false });
    expect(o.dataDir.endsWith('.rouse')).toBe(true);
    expect(o.db).toBe(join(o.dataDir, 'rouse.db'));
  });

  it('rejects bad values naming the option', () => {
    expect(() => resolveRouseServerOptions({ port: 70000 })).toThrow(
      /port must be an integer from 0 to 65535/,
    );
    expect(() => resolveRouseServerOptions({ port: 1.5 })).toThrow(/port/);
    expect(() => resolveRouseServerOptions({ logLevel: 'loud' })).toThrow(/logLevel must be one of/);
    expect(() => resolveRouseServerOptions({ host: ' ' })).toThrow(/host must not be empty/);
  });

  it('rejects short explicit tokens naming the option', async () => {
    await expect(
      startRouseServer({ port: 0, dataDir: dir, db: ':memory:', logger, adminToken: 'short' }),
    ).rejects.toThrow(/adminToken must be at least 16 characters/);
  });
});
