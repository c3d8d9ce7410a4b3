/**
 * The Codex CLI as a coding-agent worker: `codex exec --json --skip-git-repo-check [resume <id>] <prompt>`
 * with `CODEX_HOME` set to the agent's own home (never the user's `~/.codex`).
 *
 * The home gets a `config.toml` (rewritten before every run) with what a headless run needs:
 * `approval_policy = "never"`, `sandbox_mode = "workspace-write"`, no update check, no analytics. When
 * the run's environment (`--cli-env`) names `OPENAI_BASE_URL`, the config also defines a model
 * provider `rouse` on that URL (Responses API, key from `OPENAI_API_KEY`, retries by the CLI itself)
 * and selects it: Codex 0.171 itself ignores `OPENAI_BASE_URL`. Anything else goes through
 * `--cli-arg -c --cli-arg key=value`, which overrides the file.
 *
 * Sessions: the thread id comes from `thread.started`; its transcript is
 * `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`, and that file alone is enough
 * for `codex exec resume <id>` under another home.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize, relative, sep } from 'node:path';
import type { CliFlavor, CliRunPlan } from '../cli-flavor.js';
import { codexParser } from './codex-parser.js';

/** The provider the config defines when `OPENAI_BASE_URL` is given. */
export const CODEX_PROVIDER_ID = 'rouse';

/** How often the CLI retries the model API before the turn fails (it says so on `error` lines). */
export const CODEX_REQUEST_MAX_RETRIES = 4;
export const CODEX_STREAM_MAX_RETRIES = 10;

/** The config.toml a run's home gets. */
export function codexConfigToml(plan: Pick<CliRunPlan, 'extraEnv'>): string {
  const lines = [
    '# Written by `rouse agent --adapter codex` before each run; override with --cli-arg -c --cli-arg key=value.',
    'approval_policy = "never"',
    'sandbox_mode = "workspace-write"',
    'check_for_update_on_startup = false',
  ];
  const baseUrl = plan.extraEnv.OPENAI_BASE_URL;
  if (baseUrl) lines.push(`model_provider = ${tomlString(CODEX_PROVIDER_ID)}`);
  lines.push('', '[analytics]', 'enabled = false');
  if (baseUrl) {
    lines.push(
      '',
      `[model_providers.${CODEX_PROVIDER_ID}]`,
      `name = ${tomlString('OpenAI (rouse agent)')}`,
      `base_url = ${tomlString(baseUrl)}`,
      'env_key = "OPENAI_API_KEY"',
      'wire_api = "responses"',
      `request_max_retries = ${CODEX_REQUEST_MAX_RETRIES}`,
      `stream_max_retries = ${CODEX_STREAM_MAX_RETRIES}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

export const codexFlavor: CliFlavor = {
  name: 'codex',
  dependency: 'openai',
  defaultBin: 'codex',
  // Codex exits within milliseconds on SIGINT, with no further output; the thread can be resumed.
  interruptSignal: 'SIGINT',

  assignSessionId: () => null,

  async prepareHome(plan) {
    await mkdir(plan.home, { recursive: true });
    await writeFile(join(plan.home, 'config.toml'), codexConfigToml(plan));
  },

  command(plan) {
    const args = ['exec', '--json', '--skip-git-repo-check', '--cd', plan.cwd];
    if (plan.model) args.push('--model', plan.model);
    args.push(...plan.extraArgs);
    if (plan.resumeSessionId) args.push('resume', plan.resumeSessionId);
    // `--` so that a prompt starting with `-` is not taken for an option.
    args.push('--', plan.prompt);
    return { args, env: { ...plan.extraEnv, CODEX_HOME: plan.home } };
  },

  parser: codexParser,

  async sessionFiles(home, sessionId) {
    if (!isSafeId(sessionId)) return [];
    const root = join(home, 'sessions');
    const found: string[] = [];
    const suffix = `-${sessionId}.jsonl`;
    const walk = async (dir: string, depth: number): Promise<void> => {
      if (depth > 6) return;
      let entries: import('node:fs').Dirent[];
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        const path = join(dir, e.name);
        if (e.isDirectory()) await walk(path, depth + 1);
        else if (e.isFile() && e.name.startsWith('rollout-') && e.name.endsWith(suffix))
          found.push(relative(home, path));
      }
    };
    await walk(root, 0);
    return found.sort();
  },

  async restoreSession(home, sessionId, _cwd, files) {
    for (const file of files) {
      const rel = normalize(file.path);
      if (
        isAbsolute(rel) ||
        rel.split(sep).includes('..') ||
        !rel.startsWith(`sessions${sep}`) ||
        !rel.endsWith(`-${sessionId}.jsonl`)
      ) {
        throw new Error(
          `codex: refusing to restore ${JSON.stringify(file.path)}: not a transcript of ${sessionId}`,
        );
      }
      const target = join(home, rel);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, file.content);
    }
  },
};

/** A thread id as Codex prints them (a UUID); nothing that could be a path. */
function isSafeId(id: string): boolean {
  return /^[A-Za-z0-9-]{1,100}$/.test(id);
}

/** A TOML basic string (JSON's escapes are valid TOML for these). */
function tomlString(s: string): string {
  return JSON.stringify(s);
}
