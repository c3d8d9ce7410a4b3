/**
 * Where a field of a parsed YAML document is written: 1-based line and column of a value (or of a
 * key), found by walking the document's nodes along a path of keys and indices. A path that does not
 * exist in the file (a required field left out) points at its nearest ancestor that does.
 */
import { type Document, isAlias, isMap, isScalar, isSeq, type LineCounter, type Node } from 'yaml';

export type PathSegment = string | number;

export interface Position {
  line: number;
  column: number;
}

/** A parsed document with the line counter it was parsed with. */
export interface LocatedDocument {
  doc: Document;
  lines: LineCounter;
}

/** The position of a source offset. */
export function positionOf(lines: LineCounter, offset: number): Position {
  const { line, col } = lines.linePos(offset);
  return { line: Math.max(1, line), column: Math.max(1, col) };
}

/** Where the value at `path` starts (or its nearest existing ancestor). */
export function locateValue(src: LocatedDocument, path: readonly PathSegment[]): Position {
  return positionOf(src.lines, walk(src, path).offset);
}

/** Where the key `key` of the mapping at `path` is written (an unknown or misnamed key). */
export function locateKey(src: LocatedDocument, path: readonly PathSegment[], key: string): Position {
  const end = walk(src, path);
  if (end.reached && isMap(end.node)) {
    const pair = end.node.items.find((p) => keyText(p.key) === key);
    const range = (pair?.key as Node | undefined)?.range;
    if (range) return positionOf(src.lines, range[0]);
  }
  return positionOf(src.lines, end.offset);
}

/** Follows `path` as far as the document goes. */
function walk(
  src: LocatedDocument,
  path: readonly PathSegment[],
): { node: unknown; offset: number; reached: boolean } {
  let node: unknown = src.doc.contents;
  let offset = rangeStart(node) ?? 0;
  for (const segment of path) {
    if (isAlias(node)) node = node.resolve(src.doc);
    let next: unknown;
    let nextOffset: number | undefined;
    if (isMap(node)) {
      const pair = node.items.find((p) => keyText(p.key) === String(segment));
      if (pair === undefined) return { node, offset, reached: false };
      next = pair.value;
      // `key:` with nothing after it: point at the key, not at the end of its line.
      nextOffset = isEmptyScalar(pair.value)
        ? rangeStart(pair.key)
        : (rangeStart(pair.value) ?? rangeStart(pair.key));
    } else if (isSeq(node) && typeof segment === 'number') {
      next = node.items[segment];
      nextOffset = rangeStart(next);
    } else {
      return { node, offset, reached: false };
    }
    if (next === undefined) return { node, offset, reached: false };
    node = next;
    if (nextOffset !== undefined) offset = nextOffset;
  }
  return { node, offset, reached: true };
}

function keyText(key: unknown): string | undefined {
  if (isScalar(key)) return String(key.value);
  return typeof key === 'string' || typeof key === 'number' ? String(key) : undefined;
}

function isEmptyScalar(node: unknown): boolean {
  return isScalar(node) && node.value === null && node.range != null && node.range[0] === node.range[1];
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  return range ? range[0] : undefined;
}
