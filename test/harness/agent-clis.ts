/**
 * The real coding-agent CLIs the adapter tests run: `@openai/codex` and `@anthropic-ai/claude-code`,
 * pinned here and installed for the tests only — never a dependency of any package, so no user of
 * the SDK, the agent host or the server downloads them (together about 660 MB).
 *
 * They are installed once into a cache (`.cache/agent-clis/<versions>` in the repository, or
 * `ROUSE_AGENT_CLI_CACHE`) by the test run's global setup, so `npm test` on a fresh machine needs no
 * other step. Installing goes to a temporary folder renamed into place, so two runs racing on an
 * empty cache both end with a whole install. A test that needs a CLI which is not there fails
 * (never skips), naming the cause.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const AGENT_CLI_PACKAGES = {
  codex: { name: '@openai/codex', version: '0.171.0', bin: 'codex' },
  claude: { name: '@anthropic-ai/claude-code', version: '2.1.197', bin: 'claude' },
} as const;

export type AgentCli = keyof typeof AGENT_CLI_PACKAGES;

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where this set of pinned versions is installed. */
export function agentCliDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.ROUSE_AGENT_CLI_CACHE || join(repoRoot, '.cache', 'agent-clis');
  const tag = Object.values(AGENT_CLI_PACKAGES)
    .map((p) => `${p.bin}-${p.version}`)
    .join('_');
  return join(base, tag);
}

/** The path of a pinned CLI's executable; throws, naming the fix, when it is not installed. */
export function agentCliBin(cli: AgentCli, env: NodeJS.ProcessEnv = process.env): string {
  const bin = join(agentCliDir(env), 'node_modules', '.bin', AGENT_CLI_PACKAGES[cli].bin);
  if (!existsSync(bin)) {
    throw new Error(
      `${AGENT_CLI_PACKAGES[cli].name}@${AGENT_CLI_PACKAGES[cli].version} is not installed at ${bin}; ` +
        'the test run installs it first (test/harness/agent-clis-global-setup.ts) — was npm unreachable?',
    );
  }
  return bin;
}

/**
 * Install the pinned CLIs unless they are there. Returns what happened; throws with npm's output when
 * the install fails.
 */
export function ensureAgentClis(
  say: (line: string) => void = () => {},
  env: NodeJS.ProcessEnv = process.env,
): 'present' | 'installed' {
  const dir = agentCliDir(env);
  const done = (): boolean =>
    Object.values(AGENT_CLI_PACKAGES).every((p) => existsSync(join(dir, 'node_modules', '.bin', p.bin)));
  if (done()) return 'present';
  const specs = Object.values(AGENT_CLI_PACKAGES).map((p) => `${p.name}@${p.version}`);
  say(`installing ${specs.join(' and ')} for the adapter tests into ${dir} (once; about a minute)`);
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
