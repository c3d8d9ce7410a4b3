/**
 * The nesting bound of JSON bodies. A few kilobytes of `[[[[…` parse fine but make every recursive
 * walker downstream (schema validation first) overflow the stack, so bodies are measured on their
 * text, in one pass without recursion or allocation, before `JSON.parse` sees them.
 */
import { RouseError } from '../core/errors.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * True when objects and arrays in `text` nest deeper than `maxDepth` (`{}` is depth 1). Brackets
 * inside strings do not count. Malformed text is not judged here: `JSON.parse` refuses it next.
 */
export function jsonDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i);
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** The index of the quote that closes the string opened at `open` (or the end of the text). */
function closingQuote(text: string, open: number): number {
  let at = text.indexOf('"', open + 1);
  while (at !== -1) {
    // Escaped when an odd number of backslashes precede it.
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
    at = text.indexOf('"', at + 1);
  }
  return text.length;
}

/** `400 validation_failed` for a body nested deeper than `maxDepth`, naming the limit. */
export function tooDeepError(maxDepth: number): RouseError {
  const rule = `nests objects and arrays deeper than ${maxDepth} levels (maxDepth)`;
  return new RouseError('validation_failed', `body: the JSON ${rule}; flatten the value`, {
    maxDepth,
    issues: [{ path: '', message: rule, code: 'too_deep' }],
  });
}
