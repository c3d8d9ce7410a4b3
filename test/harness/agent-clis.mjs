/**
 * The real coding-agent CLIs the adapter tests and the bench's adapters workload run:
 * `@openai/codex` and `@anthropic-ai/claude-code`, pinned here and installed for the tests and the
 * bench only — never a dependency of any package, so no user of the SDK, the agent host or the
 * server downloads them (together about 660 MB).
 *
 * They are installed once into a cache (`.cache/agent-clis/<versions>` in the repository, or
 * `ROUSE_AGENT_CLI_CACHE`) by the test run's global setup and by `npm run bench`, so neither needs
 * another step on a fresh machine. Installing goes to a temporary folder renamed into place, so two
 * runs racing on an empty cache both end with a whole install.
 *
 * Plain JavaScript, so that scripts/bench.mjs can load it; agent-clis.ts adds the tests' lookups.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const AGENT_CLI_PACKAGES = {
  codex: { name: '@openai/codex', version: '0.171.0', bin: 'codex' },
  claude: { name: '@anthropic-ai/claude-code', version: '2.1.197', bin: 'claude' },
};

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where this set of pinned versions is installed. */
export function agentCliDir(env = process.env) {
  const base = env.ROUSE_AGENT_CLI_CACHE || join(repoRoot, '.cache', 'agent-clis');
  const tag = Object.values(AGENT_CLI_PACKAGES)
    .map((p) => `${p.bin}-${p.version}`)
    .join('_');
  return join(base, tag);
}

/**
 * Install the pinned CLIs unless they are there. Returns what happened; throws with npm's output when
 * the install fails.
 */
export function ensureAgentClis(say = () => {}, env = process.env) {
  const dir = agentCliDir(env);
  const done = () =>
    Object.values(AGENT_CLI_PACKAGES).every((p) => existsSync(join(dir, 'node_modules', '.bin', p.bin)));
  if (done()) return 'present';
  const specs = Object.values(AGENT_CLI_PACKAGES).map((p) => `${p.name}@${p.version}`);
  say(`installing ${specs.join(' and ')} into ${dir} (once; about a minute)`);
  mkdirSync(dirname(dir), { recursive: true });
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(
    npm,
    ['install', '--prefix', tmp, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', ...specs],
    { encoding: 'utf8', env: { ...env, npm_config_update_notifier: 'false' } },
  );
  if (result.status !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(
      `npm install ${specs.join(' ')} failed (${result.status}):\n${result.stderr}${result.stdout}`,
    );
  }
  try {
    renameSync(tmp, dir);
  } catch (err) {
    // Another run finished first: keep its install.
    rmSync(tmp, { recursive: true, force: true });
    if (!done()) throw err;
  }
  if (!done())
    throw new Error(
      `the install in ${dir} has no ${Object.values(AGENT_CLI_PACKAGES)
        .map((p) => p.bin)
        .join('/')} binaries`,
    );
  return 'installed';
}
