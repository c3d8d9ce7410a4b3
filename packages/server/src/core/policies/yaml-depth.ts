/**
 * The nesting bound of a policy file. A few kilobytes of `[[[[…` or `- - - -…` are valid YAML, but
 * composing them into a document and every walk after it (the schema's first) recurse once per level:
 * deep enough, they overflow the stack, and an overflow inside V8's regular-expression compiler can end
 * the process. The file is therefore measured on yaml's concrete syntax tree, which its parser builds
 * without recursion, and walked here with an explicit stack, before anything recursive sees it.
 */
import { type CST, Parser } from 'yaml';

/** Collections nested deeper than this are refused (the same bound as JSON bodies). */
export const POLICY_FILE_MAX_DEPTH = 64;

/**
 * The source offset of the first collection (mapping or sequence, block or flow) nested deeper than
 * `maxDepth` (a top-level mapping is depth 1), or null when none is.
 */
export function yamlTooDeepAt(text: string, maxDepth: number): number | null {
  const stack: { token: CST.Token; depth: number }[] = [];
  for (const token of new Parser().parse(text)) {
    if (token.type === 'document' && token.value !== undefined) stack.push({ token: token.value, depth: 0 });
  }
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { token, depth } = next;
    if (token.type !== 'block-map' && token.type !== 'block-seq' && token.type !== 'flow-collection')
      continue;
    if (depth + 1 > maxDepth) return token.offset;
    for (const item of token.items) {
      if ('key' in item && item.key) stack.push({ token: item.key, depth: depth + 1 });
      if (item.value) stack.push({ token: item.value, depth: depth + 1 });
    }
  }
  return null;
}
