/**
 * A one-line progress indicator for long work (`rouse tasks --all` over many pages), redrawn in place
 * on stderr. Only when stderr is a terminal; otherwise it prints nothing.
 */
export interface ProgressLine {
  update(text: string): void;
  done(): void;
}

export function createProgressLine(write: (s: string) => void, enabled: boolean): ProgressLine {
  if (!enabled) return { update: () => {}, done: () => {} };
  let width = 0;
  return {
    update(text) {
      write(`\r${text.padEnd(width)}`);
      width = Math.max(width, text.length);
    },
    done() {
      if (width) write(`\r${' '.repeat(width)}\r`);
      width = 0;
    },
  };
}
