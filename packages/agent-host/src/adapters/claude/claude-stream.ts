/**
 * What Claude Code's `--output-format stream-json --verbose` lines mean, as CliEvents (measured on
 * Claude Code 2.1.197; the fixtures next to the tests are lines it printed).
 *
 * - `system/init {session_id}` → session (the CLI accepted the new or resumed session); the run
 *   starts (`turn_started`). A refused `--resume` prints no init line, only a failed result.
 * - `assistant {message: {id, content, usage}}`: one line per content block, all carrying the same
 *   message id and the usage of its `message_start` (input tokens final, output tokens not yet): a
 *   text block → message, a `tool_use` → tool_started; the usage is counted once per message id.
 *   `model: "<synthetic>"` is the CLI's own "API Error" text, not the model's.
 * - `user {message: {content: [tool_result…]}}` → tool_finished for each id.
 * - `system/api_retry {error_status, retry_delay_ms, error}` → dependency `rate_limited` (429) or
 *   `down` (529, 5xx, no status). The next real answer → dependency `up`. 401/403 are retried too
 *   (`authentication_failed`, 10 times with a growing delay) but are no outage: the verdict at once,
 *   a failed result of kind `auth` (the CLI's own result line says the same when it comes).
 * - `result {subtype, is_error, api_error_status, terminal_reason, errors, result, total_cost_usd,
 *   usage, modelUsage}` → the usage this run had that the assistant lines did not show (output
 *   tokens, cost), then `turn_completed` and the result.
 */
import type { CliErrorKind, CliEvent } from '../cli-flavor.js';

interface Totals {
  input: number;
  output: number;
  cached: number;
}

export function claudeStreamParser(): (line: string) => CliEvent[] {
  let sessionSeen = false;
  let retrying = false;
  const counted = new Set<string>();
  const openTools = new Set<string>();
  const sum: Totals = { input: 0, output: 0, cached: 0 };

  return (line: string): CliEvent[] => {
    const trimmed = line.trim();
    if (!trimmed) return [];
    let msg: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (!isObject(parsed)) return [{ type: 'notice', detail: trimmed }];
      msg = parsed;
    } catch {
      return [{ type: 'notice', detail: trimmed }];
    }
    const out: CliEvent[] = [];
    const sessionId = str(msg.session_id);
    const noteSession = (): void => {
      if (!sessionSeen && sessionId) {
        sessionSeen = true;
        out.push({ type: 'session', sessionId });
      }
    };

    switch (msg.type) {
      case 'system': {
        if (msg.subtype === 'init') {
          noteSession();
          out.push({ type: 'turn_started' });
        } else if (msg.subtype === 'api_retry') {
          noteSession();
          out.push(retryEvent(msg));
          retrying = true;
        }
        break;
      }
      case 'assistant': {
        noteSession();
        const m = isObject(msg.message) ? msg.message : {};
        if (m.model === '<synthetic>') {
          // The CLI's own error text (retries ran out, auth refused): the result line says it all.
          break;
        }
        if (retrying) {
          retrying = false;
          out.push({ type: 'dependency', state: 'up', detail: 'anthropic answered again' });
        }
        const id = str(m.id);
        if (id && !counted.has(id) && isObject(m.usage)) {
          counted.add(id);
          const u = tokens(m.usage);
          sum.input += u.input;
          sum.output += u.output;
          sum.cached += u.cached;
          out.push({
            type: 'usage',
            inputTokens: u.input,
            outputTokens: u.output,
            cachedInputTokens: u.cached,
            cumulative: false,
          });
        }
        for (const block of Array.isArray(m.content) ? m.content : []) {
          if (!isObject(block)) continue;
          if (block.type === 'text' && typeof block.text === 'string') {
            out.push({ type: 'message', text: block.text }, { type: 'item_completed', kind: 'text' });
          } else if (block.type === 'tool_use') {
            const toolId = str(block.id) ?? '';
            openTools.add(toolId);
            out.push(
              { type: 'tool_started', id: toolId, name: str(block.name) ?? 'tool' },
              { type: 'item_completed', kind: 'tool_use' },
            );
          } else if (typeof block.type === 'string') {
            out.push({ type: 'item_completed', kind: block.type });
          }
        }
        break;
      }
      case 'user': {
        noteSession();
        const m = isObject(msg.message) ? msg.message : {};
        for (const block of Array.isArray(m.content) ? m.content : []) {
          if (!isObject(block)) continue;
          if (block.type === 'tool_result') {
            const toolId = str(block.tool_use_id) ?? '';
            openTools.delete(toolId);
            out.push({ type: 'tool_finished', id: toolId }, { type: 'item_completed', kind: 'tool_result' });
          } else if (block.type === 'text' && typeof block.text === 'string' && block.text.startsWith('[')) {
            out.push({ type: 'notice', detail: block.text });
          }
        }
        break;
      }
      case 'result': {
        // No session event from a result alone: a resume the CLI refused ("No conversation found")
        // prints only this line, and the adapter must see that the session did not start.
        for (const id of openTools) out.push({ type: 'tool_finished', id });
        openTools.clear();
        const cost = num(msg.total_cost_usd);
        const total = resultTotals(msg);
        const extra = {
          input: Math.max(0, total.input - sum.input),
          output: Math.max(0, total.output - sum.output),
          cached: Math.max(0, total.cached - sum.cached),
        };
        if (extra.input + extra.output + extra.cached > 0 || cost > 0) {
          out.push({
            type: 'usage',
            inputTokens: extra.input,
            outputTokens: extra.output,
            cachedInputTokens: extra.cached,
            ...(cost > 0 ? { costUsd: cost } : {}),
            cumulative: false,
          });
        }
        out.push({ type: 'turn_completed' }, resultEvent(msg, cost));
        break;
      }
      default:
        break;
    }
    return out;
  };
}

function retryEvent(msg: Record<string, unknown>): CliEvent {
  const status = typeof msg.error_status === 'number' ? msg.error_status : undefined;
  const delay = num(msg.retry_delay_ms);
  const what = str(msg.error) ?? 'error';
  const detail = `anthropic: ${what}${status ? ` (${status})` : ''}, retry ${num(msg.attempt)}/${num(msg.max_retries)} in ${Math.round(delay)} ms`;
  if (status === 401 || status === 403) {
    // The CLI would retry a refused key for minutes (10 times, backing off): the verdict is known now.
    return { type: 'result', ok: false, error: { kind: 'auth', detail } };
  }
  if (status === 429) {
    return { type: 'dependency', state: 'rate_limited', retryAfterMs: Math.round(delay), status, detail };
  }
  if (status !== undefined && status < 500) return { type: 'notice', detail };
  return {
    type: 'dependency',
    state: 'down',
    retryAfterMs: Math.round(delay),
    ...(status !== undefined ? { status } : {}),
    detail,
  };
}

function resultEvent(msg: Record<string, unknown>, cost: number): CliEvent {
  const subtype = str(msg.subtype) ?? '';
  const isError = msg.is_error === true || subtype !== 'success';
  const text = str(msg.result);
  const numTurns = typeof msg.num_turns === 'number' ? msg.num_turns : undefined;
  const base = {
    type: 'result' as const,
    ...(numTurns !== undefined ? { numTurns } : {}),
    ...(cost > 0 ? { costUsd: cost } : {}),
  };
  if (!isError) return { ...base, ok: true, ...(text !== undefined ? { message: text } : {}) };
  const errors = Array.isArray(msg.errors) ? msg.errors.filter((e) => typeof e === 'string') : [];
  const detail = [text, ...errors].filter(Boolean).join('; ') || subtype || 'claude reported an error';
  return { ...base, ok: false, error: { kind: errorKind(msg, subtype), detail } };
}

function errorKind(msg: Record<string, unknown>, subtype: string): CliErrorKind {
  const status = msg.api_error_status;
  if (status === 401 || status === 403) return 'auth';
  if (subtype === 'error_max_turns' || subtype.includes('budget')) return 'budget';
  const terminal = str(msg.terminal_reason) ?? '';
  if (subtype === 'error_during_execution' && terminal.startsWith('aborted')) return 'interrupted';
  if (typeof status === 'number') return 'api';
  return 'turn_failed';
}

/** Anthropic's input tokens exclude cache reads and writes; ours include them (as Codex's do). */
function tokens(u: Record<string, unknown>): Totals {
  const cached = num(u.cache_read_input_tokens);
  return {
    input: num(u.input_tokens) + num(u.cache_creation_input_tokens) + cached,
    output: num(u.output_tokens),
    cached,
  };
}

/**
 * The run's totals: `modelUsage` (per model; the only complete numbers when a budget stops the run,
 * where `usage` is all zeros), else `usage`.
 */
function resultTotals(msg: Record<string, unknown>): Totals {
  if (isObject(msg.modelUsage) && Object.keys(msg.modelUsage).length > 0) {
    const t: Totals = { input: 0, output: 0, cached: 0 };
    for (const m of Object.values(msg.modelUsage)) {
      if (!isObject(m)) continue;
      const cached = num(m.cacheReadInputTokens);
      t.input += num(m.inputTokens) + num(m.cacheCreationInputTokens) + cached;
      t.output += num(m.outputTokens);
      t.cached += cached;
    }
    return t;
  }
  return isObject(msg.usage) ? tokens(msg.usage) : { input: 0, output: 0, cached: 0 };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}
