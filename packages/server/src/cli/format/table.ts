/** A small text table: left-aligned columns, padded to the widest cell, ANSI-aware. */
import { visibleLength } from './style.js';

export interface Column<Row> {
  header: string;
  /** The cell text for a row. */
  value(row: Row): string;
  /** Right-align (numbers). @default false */
  right?: boolean;
  /** Truncate cells longer than this (with …). */
  maxWidth?: number;
}

export function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  return max <= 1 ? s.slice(0, max) : `${s.slice(0, max - 1)}…`;
}

/** Render rows as lines of text (header first). Returns `[]` for no columns. */
export function renderTable<Row>(rows: readonly Row[], columns: readonly Column<Row>[], gap = 2): string[] {
  if (columns.length === 0) return [];
  const cells = rows.map((row) =>
    columns.map((c) => {
      const v = c.value(row).replace(/\s*\n\s*/g, ' ');
      return c.maxWidth ? truncate(v, c.maxWidth) : v;
    }),
  );
  const widths = columns.map((c, i) =>
    Math.max(c.header.length, ...cells.map((r) => visibleLength(r[i] ?? ''))),
  );
  const pad = (s: string, i: number) => {
    const fill = ' '.repeat(Math.max(0, (widths[i] ?? 0) - visibleLength(s)));
    return columns[i]?.right ? fill + s : s + fill;
  };
  const line = (r: string[]) =>
    r
      .map((s, i) => pad(s, i))
      .join(' '.repeat(gap))
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)];
}

/** Render `key: value` pairs with the keys aligned. */
export function renderPairs(pairs: readonly [string, string][], indent = ''): string[] {
  const width = Math.max(0, ...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${indent}${`${k}:`.padEnd(width + 1)} ${v}`);
}
