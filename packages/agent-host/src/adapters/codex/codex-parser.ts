/**
 * What the lines of `codex exec --json` mean (measured on @openai/codex 0.171.0):
 *
 *   {"type":"thread.started","thread_id":"<uuid v7>"}          first line, also when resuming
 *   {"type":"turn.started"}
 *   {"type":"item.started","item":{"id":"item_0","type":"command_execution","status":"in_progress",…}}
 *   {"type":"item.completed","item":{"id":"item_0","type":"command_execution","exit_code":0,…}}
 *   {"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"…"}}
 *   {"type":"turn.completed","usage":{"input_tokens":…,"cached_input_tokens":…,"output_tokens":…}}
 *   {"type":"turn.failed","error":{"message":"…"}}
 *   {"type":"error","message":"Reconnecting... 1/10 (exceeded retry limit, last status: 429 Too Many Requests)"}
 *
 * One `codex exec` runs one turn, so `turn.completed` / `turn.failed` is the run's verdict. The usage
 * of `turn.completed` is the total of the whole thread (a resumed thread counts its earlier turns).
 * The CLI retries its model API by itself and says so on `error` lines: those become dependency
 * reports (429 → rate-limited; 5xx, "high demand", a lost connection → down); it prints no delay.
 */
import type { CliErrorKind, CliEvent } from '../cli-flavor.js';

/** Item types that run something outside the model: silence is expected while they are in flight. */
const TOOL_ITEMS = new Set(['command_execution', 'mcp_tool_call', 'web_search', 'collab_tool_call']);

interface Item {
  id?: unknown;
  type?: unknown;
  text?: unknown;
  message?: unknown;
}

/** A parser for one run's stdout. Stateful: it pairs tool items and notices the model answering again. */
export function codexParser(): (line: string) => CliEvent[] {
  const inFlight = new Set<string>();
  let lastMessage: string | undefined;
  let degraded = false;
  let verdict = false;

  /** The model answered (an item or the turn's end came): a dependency trouble seen before is over. */
  const recovered = (out: CliEvent[]): void => {
    if (!degraded) return;
    degraded = false;
    out.push({ type: 'dependency', state: 'up', detail: 'the model API answered again' });
  };

  return (line: string): CliEvent[] => {
    const msg = parseObject(line);
    if (!msg) return [];
    const out: CliEvent[] = [];
    switch (msg.type) {
      case 'thread.started':
        if (typeof msg.thread_id === 'string' && msg.thread_id)
          out.push({ type: 'session', sessionId: msg.thread_id });
        break;
      case 'turn.started':
        out.push({ type: 'turn_started' });
        break;
      case 'item.started': {
        const item = asItem(msg.item);
        if (!item) break;
        recovered(out);
        if (typeof item.type === 'string' && TOOL_ITEMS.has(item.type) && typeof item.id === 'string') {
          inFlight.add(item.id);
          out.push({ type: 'tool_started', id: item.id, name: item.type });
        }
        break;
      }
      case 'item.completed': {
        const item = asItem(msg.item);
        if (!item) break;
        recovered(out);
        const kind = typeof item.type === 'string' ? item.type : 'unknown';
        if (typeof item.id === 'string' && inFlight.delete(item.id))
          out.push({ type: 'tool_finished', id: item.id });
        out.push({ type: 'item_completed', kind });
        if (kind === 'agent_message' && typeof item.text === 'string') {
          lastMessage = item.text;
          out.push({ type: 'message', text: item.text });
        } else if (kind === 'error' && typeof item.message === 'string') {
          out.push({ type: 'notice', detail: item.message });
        }
        break;
      }
      case 'turn.completed': {
        verdict = true;
        recovered(out);
        const usage = asRecord(msg.usage);
        if (usage) {
          out.push({
            type: 'usage',
            inputTokens: num(usage.input_tokens),
            outputTokens: num(usage.output_tokens),
            cachedInputTokens: num(usage.cached_input_tokens),
            cumulative: true,
          });
        }
        out.push({ type: 'turn_completed' });
        out.push({
          type: 'result',
          ok: true,
          ...(lastMessage !== undefined ? { message: lastMessage } : {}),
        });
        break;
      }
      case 'turn.failed': {
        if (verdict) break;
        verdict = true;
        const error = asRecord(msg.error);
        const detail =
          typeof error?.message === 'string' && error.message ? error.message : 'the turn failed';
        out.push({ type: 'result', ok: false, error: { kind: classifyFailure(detail), detail } });
        break;
      }
      case 'error': {
        const detail = typeof msg.message === 'string' ? msg.message : JSON.stringify(msg);
        const retry = retryNotice(detail);
        const refused =
          !retry && !verdict && /^Reconnecting/.test(detail.trim()) ? authRefusal(detail) : null;
        if (refused) {
          // The CLI retries a refused key too (stream_max_retries times, with backoff): the verdict is
          // known now, so the adapter can stop it after its grace instead of waiting minutes.
          verdict = true;
          out.push({ type: 'notice', detail }, refused);
        } else if (retry) {
          degraded = true;
          out.push(retry);
        } else {
          out.push({ type: 'notice', detail });
        }
        break;
      }
      default:
        break;
    }
    return out;
  };
}

/**
 * A `Reconnecting... N/M (reason)` notice as a dependency report, or null when the line is not a
 * retry notice or the reason is not the model service's trouble (an auth refusal is retried too, but
 * it is the run's failure, not an outage).
 */
export function retryNotice(message: string): CliEvent | null {
  const m = /^Reconnecting\.*\s*(.*)$/s.exec(message.trim());
  if (!m) return null;
  const reason = (/\((.*)\)\s*$/s.exec(m[1] ?? '')?.[1] ?? m[1] ?? '').trim();
  const status = httpStatus(reason);
  const detail = `codex: ${message.trim()}`;
  if (status === 401 || status === 403) return null;
  if (status === 429 || /too many requests|rate.?limit/i.test(reason)) {
    return { type: 'dependency', state: 'rate_limited', status: 429, detail };
  }
  if (
    (status !== undefined && status >= 500) ||
    /high demand|overloaded|unavailable|stream disconnected|waiting for network|connection failed|timed? ?out/i.test(
      reason,
    )
  ) {
    return { type: 'dependency', state: 'down', ...(status !== undefined ? { status } : {}), detail };
  }
  return null;
}

/** A retry notice for a refused key (401/403) as the run's verdict; null for any other notice. */
function authRefusal(message: string): CliEvent | null {
  const status = httpStatus(message);
  if (status !== 401 && status !== 403) return null;
  const reason = (/\((.*)\)\s*$/s.exec(message.trim())?.[1] ?? message).trim();
  return {
    type: 'result',
    ok: false,
    error: { kind: 'auth', detail: `the model API refused the key: ${reason}` },
  };
}

/** Why a turn failed, from its message. */
export function classifyFailure(message: string): CliErrorKind {
  const status = httpStatus(message);
  if (
    status === 401 ||
    status === 403 ||
    /unauthori[sz]ed|forbidden|invalid api key|missing environment variable/i.test(message)
  )
    return 'auth';
  if (/quota|billing|usage limit/i.test(message)) return 'budget';
  if (
    (status !== undefined && (status === 429 || status >= 500)) ||
    /retry limit|high demand|stream disconnected|idle timeout|connection|network/i.test(message)
  )
    return 'api';
  return 'turn_failed';
}

/** The HTTP status a Codex message names (`status: 429 Too Many Requests`, `status 401 Unauthorized`). */
function httpStatus(text: string): number | undefined {
  const m = /\bstatus:?\s*(\d{3})\b/i.exec(text) ?? /\b([45]\d\d)\s+[A-Z][a-z]/.exec(text);
  return m ? Number(m[1]) : undefined;
}

function parseObject(line: string): Record<string, unknown> | null {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return null;
  try {
    return asRecord(JSON.parse(trimmed));
  } catch {
    return null;
  }
}

function asRecord(v: unknown): Record<string, unknown> | null {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

function asItem(v: unknown): Item | null {
  return asRecord(v) as Item | null;
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0;
}
