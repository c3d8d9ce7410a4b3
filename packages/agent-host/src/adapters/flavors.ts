/**
 * The CLI flavors `rouse agent --adapter <name>` can run, by name: each flavor adds its import and
 * its entry to `FLAVORS` (`codex: codexFlavor`, `claude: claudeFlavor`). `shell` is not a flavor
 * (shell/shell-adapter.ts). The `fake` flavor of the tests is reachable only with
 * `ROUSE_ADAPTER_TEST_FLAVORS=1` in the environment.
 */
import { claudeFlavor } from './claude/claude-flavor.js';
import type { CliFlavor } from './cli-flavor.js';
import { codexFlavor } from './codex/codex-flavor.js';
import { fakeFlavor } from './fake/fake-flavor.js';

export const FLAVORS: Record<string, CliFlavor> = {
  codex: codexFlavor, // the Codex CLI (codex/codex-flavor.ts)
  claude: claudeFlavor, // Claude Code (claude/claude-flavor.ts)
};

const TEST_FLAVORS: Record<string, CliFlavor> = { fake: fakeFlavor };

/** The flavor called `name`, or undefined. */
export function flavorNamed(name: string, env: NodeJS.ProcessEnv = process.env): CliFlavor | undefined {
  if (Object.hasOwn(FLAVORS, name)) return FLAVORS[name];
  if (env.ROUSE_ADAPTER_TEST_FLAVORS === '1' && Object.hasOwn(TEST_FLAVORS, name)) return TEST_FLAVORS[name];
  return undefined;
}

/** The names `--adapter` accepts besides `shell`. */
export function flavorNames(env: NodeJS.ProcessEnv = process.env): string[] {
  return [
    ...Object.keys(FLAVORS),
    ...(env.ROUSE_ADAPTER_TEST_FLAVORS === '1' ? Object.keys(TEST_FLAVORS) : []),
  ];
}
