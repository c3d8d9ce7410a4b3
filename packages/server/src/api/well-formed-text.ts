/**
 * Text in a JSON body must be well-formed Unicode. JSON can spell a lone surrogate (`"\ud800"`), but
 * no store keeps one as sent: SQLite's text columns turn it into U+FFFD (so two different keys read
 * back the same), and PostgreSQL refuses it. Such bodies are refused at the edge, the same on every
 * store, naming where. Only a body whose text holds a surrogate escape is walked, so the cost on
 * every other body is one scan for `\u` followed by `d8`–`df`.
 */
import { RouseError } from '../core/errors.js';

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The path (`.a.0.b`, '' for the body itself) of the first string or key with a lone surrogate, or null. */
function illFormedAt(value: unknown, path: string): string | null {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? path : null;
  if (value === null || typeof value !== 'object') return null;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const at = illFormedAt(item, `${path}.${i}`);
      if (at !== null) return at;
    }
    return null;
  }
  for (const [key, item] of Object.entries(value)) {
    if (LONE_SURROGATE.test(key)) return `${path}.${key}`;
    const at = illFormedAt(item, `${path}.${key}`);
    if (at !== null) return at;
  }
  return null;
}

/**
 * `400 validation_failed` when the body parsed from `text` holds a lone surrogate, else null. Bodies
 * are at most `jsonMaxDepth` deep when this runs, so the walk's recursion is bounded.
 */
export function illFormedTextError(text: string, body: unknown): RouseError | null {
  if (!SURROGATE_ESCAPE.test(text)) return null;
  const at = illFormedAt(body, '');
  if (at === null) return null;
  const path = at.slice(1);
  const rule = 'holds a lone surrogate (\\ud800–\\udfff without its pair): text must be well-formed Unicode';
  return new RouseError(
    'validation_failed',
    `body${at}: ${rule}; send the character itself, or its full pair`,
    {
      issues: [{ path, message: rule, code: 'lone_surrogate' }],
    },
  );
}
