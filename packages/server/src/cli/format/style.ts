/** Minimal ANSI styling, off unless the output is a colour terminal (and `NO_COLOR` is unset). */
import type { TaskStatus } from '@rouse/protocol';

export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
  status(status: TaskStatus | string): string;
}

const wrap = (open: number, close: number) => (s: string) => `\u001b[${open}m${s}\u001b[${close}m`;
const id = (s: string) => s;

export function createStyle(color: boolean): Style {
  const bold = color ? wrap(1, 22) : id;
  const dim = color ? wrap(2, 22) : id;
  const red = color ? wrap(31, 39) : id;
  const green = color ? wrap(32, 39) : id;
  const yellow = color ? wrap(33, 39) : id;
  const cyan = color ? wrap(36, 39) : id;
  const status = (s: string): string => {
    switch (s) {
      case 'completed':
        return green(s);
      case 'failed':
      case 'timeout':
        return red(s);
      case 'running':
      case 'claimed':
        return cyan(s);
      case 'cancelled':
        return dim(s);
      default:
        return s;
    }
  };
  return { bold, dim, red, green, yellow, cyan, status };
}

/** Visible width of a string: ANSI escapes do not count. */
export function visibleLength(s: string): number {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping ANSI escapes on purpose
  return s.replace(/\u001b\[[0-9;]*m/g, '').length;
}
