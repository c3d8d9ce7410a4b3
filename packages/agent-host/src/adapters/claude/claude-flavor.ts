/**
 * Claude Code (`claude -p --output-format stream-json --verbose`) as a CliFlavor.
 *
 * Measured on Claude Code 2.1.197:
 * - its home is three variables: `HOME`, `CLAUDE_CONFIG_DIR` (settings, `.claude.json`, transcripts)
 *   and `CLAUDE_CODE_TMPDIR` (else its Bash tool writes under the system temp dir); the model API
 *   comes from `ANTHROPIC_BASE_URL` / `ANTHROPIC_API_KEY` (given with `--cli-env`);
 * - a new session gets an id chosen before the start (`--session-id <uuid>`; reusing one is refused),
 *   a retry or a wake resumes it with `--resume <id>` — never `--continue`, which picks "the most
 *   recent" conversation of the directory;
 * - `--max-turns N` (not in `--help`, but honoured: `result error_max_turns`) and `--max-budget-usd X`
 *   (`result error_max_budget_usd`) are native limits;
 * - the transcript is `$CLAUDE_CONFIG_DIR/projects/<cwd, every non-alphanumeric as "-">/<id>.jsonl`
 *   (the real path of the cwd; longer than 200 characters: the first 200, "-" and a hash), plus a
 *   `<id>/` folder beside it when tools stored large outputs; `--resume` looks only under the
 *   directory of the current cwd ("No conversation found with session ID" otherwise);
 * - SIGINT while it streams or runs a tool ends the run with `result error_during_execution`
 *   (`terminal_reason: aborted_streaming | aborted_tools`); the session can be resumed.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, realpath, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { CliFlavor, CliRunPlan } from '../cli-flavor.js';
import { claudeStreamParser } from './claude-stream.js';

/** Tools a headless task may use without asking (there is nobody to ask). */
export const CLAUDE_DEFAULT_ALLOWED_TOOLS = 'Bash,Edit,Write,Read,Glob,Grep,NotebookEdit';

const CONFIG_DIR = 'config';
const TMP_DIR = 'tmp';
const USER_HOME = 'home';

export const claudeFlavor: CliFlavor = {
  name: 'claude',
  dependency: 'anthropic',
  defaultBin: 'claude',
  interruptSignal: 'SIGINT',

  assignSessionId: () => randomUUID(),

  async prepareHome(plan: CliRunPlan): Promise<void> {
    for (const d of [USER_HOME, CONFIG_DIR, TMP_DIR]) await mkdir(join(plan.home, d), { recursive: true });
  },

  command(plan: CliRunPlan): { args: string[]; env: Record<string, string> } {
    const args = ['-p', '--output-format', 'stream-json', '--verbose'];
    if (plan.resumeSessionId) args.push('--resume', plan.resumeSessionId);
    else if (plan.newSessionId) args.push('--session-id', plan.newSessionId);
    if (plan.maxTurns !== null) args.push('--max-turns', String(plan.maxTurns));
    if (plan.maxBudgetUsd !== null) args.push('--max-budget-usd', String(plan.maxBudgetUsd));
    if (plan.model) args.push('--model', plan.model);
    const userChosePermissions = plan.extraArgs.some((a) =>
      /^--(allowedTools|allowed-tools|permission-mode|dangerously-skip-permissions)\b/.test(a),
    );
    if (!userChosePermissions) args.push(`--allowedTools=${CLAUDE_DEFAULT_ALLOWED_TOOLS}`);
    // `--allowedTools` and other variadic flags would swallow the prompt: end the options first.
    args.push(...plan.extraArgs, '--', plan.prompt);
    return { args, env: claudeEnv(plan) };
  },

  parser: claudeStreamParser,

  async sessionFiles(home: string, sessionId: string): Promise<string[]> {
    const projects = join(home, CONFIG_DIR, 'projects');
    const dirs = await readdir(projects).catch(() => [] as string[]);
    const found: string[] = [];
    for (const d of dirs) {
      const transcript = join(projects, d, `${sessionId}.jsonl`);
      if (!(await isFile(transcript))) continue;
      found.push(relative(home, transcript));
      for (const f of await filesUnder(join(projects, d, sessionId))) found.push(relative(home, f));
    }
    return found;
  },

  async restoreSession(home, sessionId, cwd, files): Promise<void> {
    const target = join(
      home,
      CONFIG_DIR,
      'projects',
      claudeProjectDirName(await realpath(cwd).catch(() => cwd)),
    );
    for (const f of files) {
      // A carried path is `config/projects/<old cwd>/<id>.jsonl` or `…/<id>/…`: keep what follows the
      // old project folder, put it under the new cwd's.
      const parts = f.path.split(/[\\/]/);
      const at = parts.findIndex((p) => p === `${sessionId}.jsonl` || p === sessionId);
      if (at < 0) continue;
      const dest = resolve(target, ...parts.slice(at));
      if (!dest.startsWith(target + sep)) continue; // never write outside the project folder
      await mkdir(dirname(dest), { recursive: true });
      await writeFile(dest, f.content);
    }
  },
};

/** The environment of a run: its own home, no telemetry or updates, then `--cli-env`. */
export function claudeEnv(plan: CliRunPlan): Record<string, string> {
  return {
    HOME: join(plan.home, USER_HOME),
    CLAUDE_CONFIG_DIR: join(plan.home, CONFIG_DIR),
    CLAUDE_CODE_TMPDIR: join(plan.home, TMP_DIR),
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    ...plan.extraEnv,
  };
}

/** Claude Code's folder name for a working directory under `projects/` (as 2.1.197 computes it). */
export function claudeProjectDirName(cwd: string): string {
  const dashed = cwd.replace(/[^a-zA-Z0-9]/g, '-');
  if (dashed.length <= 200) return dashed;
  let h = 0;
  for (let i = 0; i < cwd.length; i++) h = ((h << 5) - h + cwd.charCodeAt(i)) | 0;
  return `${dashed.slice(0, 200)}-${Math.abs(h).toString(36)}`;
}

async function isFile(p: string): Promise<boolean> {
  return (await stat(p).catch(() => null))?.isFile() ?? false;
}

async function filesUnder(dir: string, depth = 0): Promise<string[]> {
  if (depth > 8) return [];
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const out: string[] = [];
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p, depth + 1)));
    else if (e.isFile()) out.push(p);
  }
  return out;
}
