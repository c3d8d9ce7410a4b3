/**
 * The contract between the generic coding-agent adapter (`cli-task.ts`: claim, spawn, heartbeat,
 * sessions, wake, timeouts, budget, complete) and one CLI (`codex/`, `claude/`): how to start and
 * resume it, what its output lines mean, and where its session transcript lives.
 *
 * A flavor is pure knowledge of one CLI: it spawns nothing and talks to no coordinator.
 */

/** What one line of a CLI's machine-readable output told the adapter. */
export type CliEvent =
  /** The CLI's session (conversation) id: Codex's `thread_id`, Claude's `session_id`. */
  | { type: 'session'; sessionId: string }
  | { type: 'turn_started' }
  | { type: 'turn_completed' }
  /** An item finished: an assistant message, a command, a file change, … (`kind` as the CLI names it). */
  | { type: 'item_completed'; kind: string }
  /** A tool call began (Codex `command_execution` started, Claude `tool_use`): silence is expected. */
  | { type: 'tool_started'; id: string; name: string }
  /** …and ended (Codex item completed, Claude `tool_result` for that id). */
  | { type: 'tool_finished'; id: string }
  /**
   * Token usage. `cumulative`: the numbers are totals for the whole session so far (Codex
   * `turn.completed`); otherwise they add to what was seen before.
   */
  | {
      type: 'usage';
      inputTokens: number;
      outputTokens: number;
      cachedInputTokens?: number;
      costUsd?: number;
      cumulative: boolean;
    }
  /** The CLI is retrying its model API (Codex `Reconnecting…`, Claude `system/api_retry`). */
  | {
      type: 'dependency';
      state: 'rate_limited' | 'down';
      retryAfterMs?: number;
      status?: number;
      detail: string;
    }
  /** The model answered again after a retry notice. */
  | { type: 'dependency'; state: 'up'; detail: string }
  /** An assistant message (the last one before the result is the task's result message). */
  | { type: 'message'; text: string }
  /**
   * The run's final verdict (Codex `turn.completed` / `turn.failed`, Claude `result`). After it the
   * process should exit; if it does not within a grace, the adapter kills it and keeps the verdict.
   */
  | {
      type: 'result';
      ok: boolean;
      /** The final assistant message, when the CLI states it. */
      message?: string;
      error?: { kind: CliErrorKind; detail: string };
      numTurns?: number;
      costUsd?: number;
    }
  /** A non-fatal error line. */
  | { type: 'notice'; detail: string };

/**
 * Why a run failed. `auth` and `budget` are never retried; `turn_failed` and `api` are; `interrupted`
 * is a turn the adapter interrupted itself (a wake).
 */
export type CliErrorKind = 'turn_failed' | 'auth' | 'budget' | 'api' | 'interrupted';

/** One run of the CLI, as the adapter plans it. */
export interface CliRunPlan {
  prompt: string;
  /** The task's working directory (payload `cwd`, or a fresh one under the agent's data dir). */
  cwd: string;
  /** The CLI's home for this agent: config, sessions, temp files (never the user's own). */
  home: string;
  model: string | null;
  /** Resume this session by id (a retry, or a wake's nudge). Never `--last` / `--continue`. */
  resumeSessionId: string | null;
  /** A session id chosen before the start (Claude `--session-id`); null when the CLI reports its own. */
  newSessionId: string | null;
  maxTurns: number | null;
  maxBudgetUsd: number | null;
  /** `--cli-arg` values, passed as they are. */
  extraArgs: string[];
  /** `--cli-env` values (and the test harness's fake model URL), added to the environment. */
  extraEnv: Record<string, string>;
}

export interface CliFlavor {
  /** The flavor's name (`codex`, `claude`; the tests' `fake`): `--adapter` and the carried session say it. */
  readonly name: string;
  /** The dependency its model API calls are reported as (`openai`, `anthropic`). */
  readonly dependency: string;
  /** The executable looked up on PATH without `--bin`. */
  readonly defaultBin: string;
  /** The signal that interrupts a turn, after which the session can be resumed. */
  readonly interruptSignal: NodeJS.Signals;
  /** A session id to start a new session with, or null when the CLI assigns one itself. */
  assignSessionId(): string | null;
  /** Write what the CLI needs in `plan.home` before a run (e.g. Codex's config.toml). Idempotent. */
  prepareHome(plan: CliRunPlan): Promise<void>;
  /** The arguments (without the executable) and the environment of a run. */
  command(plan: CliRunPlan): { args: string[]; env: Record<string, string> };
  /** A parser for one run's stdout (stateful: it may pair tool calls with their results). */
  parser(): (line: string) => CliEvent[];
  /**
   * The files that hold session `sessionId` under `home` (its transcript), as paths relative to
   * `home`, so a retry on another host can resume it. Empty when there are none.
   */
  sessionFiles(home: string, sessionId: string, cwd: string): Promise<string[]>;
  /**
   * Put a carried session back under a (new) `home` before resuming it, for a run in `cwd` (paths
   * may depend on it: Claude keeps transcripts under `projects/<cwd with dashes>/`).
   */
  restoreSession(
    home: string,
    sessionId: string,
    cwd: string,
    files: { path: string; content: Buffer }[],
  ): Promise<void>;
}
