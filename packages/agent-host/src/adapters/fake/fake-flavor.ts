/**
 * The `fake` flavor: a CliFlavor for a stand-in CLI that prints the adapter's own event shape, one
 * JSON object per line (the tests' `test/fixtures/fake-agent-cli.mjs`). It lets the generic adapter
 * be tested through a real coordinator and real processes without a real coding-agent CLI; `rouse
 * agent --adapter fake` accepts it only when `ROUSE_ADAPTER_TEST_FLAVORS=1` (see flavors.ts).
 *
 * Its command line: `<bin> --home <home> [--resume <id>] [--max-turns N] [--model M] <extra args> -- <prompt>`;
 * its session transcript: `<home>/sessions/<id>.jsonl`.
 */
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { CliEvent, CliFlavor, CliRunPlan } from '../cli-flavor.js';

const TYPES = new Set([
  'session',
  'turn_started',
  'turn_completed',
  'item_completed',
  'tool_started',
  'tool_finished',
  'usage',
  'dependency',
  'message',
  'result',
  'notice',
]);

export const fakeFlavor: CliFlavor = {
  name: 'fake',
  dependency: 'fake-model',
  defaultBin: 'fake-agent-cli',
  interruptSignal: 'SIGINT',
  assignSessionId: () => null,
  async prepareHome(plan: CliRunPlan) {
    await mkdir(join(plan.home, 'sessions'), { recursive: true });
  },
  command(plan: CliRunPlan) {
    const args = ['--home', plan.home];
    if (plan.resumeSessionId !== null) args.push('--resume', plan.resumeSessionId);
    if (plan.maxTurns !== null) args.push('--max-turns', String(plan.maxTurns));
    if (plan.model !== null) args.push('--model', plan.model);
    args.push(...plan.extraArgs, '--', plan.prompt);
    return { args, env: { ...plan.extraEnv } };
  },
  parser() {
    return (line: string): CliEvent[] => {
      let v: unknown;
      try {
        v = JSON.parse(line);
      } catch {
        return [];
      }
      if (typeof v !== 'object' || v === null || !TYPES.has((v as { type?: string }).type ?? '')) return [];
      return [v as CliEvent];
    };
  },
  async sessionFiles(home: string, sessionId: string) {
    const rel = join('sessions', `${sessionId}.jsonl`);
    try {
      await stat(join(home, rel));
      return [rel];
    } catch {
      return [];
    }
  },
  async restoreSession(home, _sessionId, _cwd, files) {
    for (const f of files) {
      await mkdir(dirname(join(home, f.path)), { recursive: true });
      await writeFile(join(home, f.path), f.content);
    }
  },
};

/** For tests: the transcript's prompts (one per run of the session). */
export async function fakeTranscript(home: string, sessionId: string): Promise<string[]> {
  const text = await readFile(join(home, 'sessions', `${sessionId}.jsonl`), 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { prompt: string }).prompt);
}
