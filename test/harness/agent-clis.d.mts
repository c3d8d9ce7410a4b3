export declare const AGENT_CLI_PACKAGES: {
  readonly codex: { readonly name: '@openai/codex'; readonly version: string; readonly bin: 'codex' };
  readonly claude: {
    readonly name: '@anthropic-ai/claude-code';
    readonly version: string;
    readonly bin: 'claude';
  };
};

/** Where this set of pinned versions is installed. */
export function agentCliDir(env?: NodeJS.ProcessEnv): string;

/** Install the pinned CLIs unless they are there; throws with npm's output when the install fails. */
export function ensureAgentClis(
  say?: (line: string) => void,
  env?: NodeJS.ProcessEnv,
): 'present' | 'installed';
