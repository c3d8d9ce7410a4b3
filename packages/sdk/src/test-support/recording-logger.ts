/** A logger that keeps every line, for tests that assert what the SDK logs. */
import type { Logger } from '../logger.js';

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  obj: object;
  msg: string | undefined;
}

export interface RecordingLogger {
  logger: Logger;
  lines: LogLine[];
  /** The messages logged (at `level`), in order. */
  messages(level?: LogLine['level']): string[];
  /** Resolves with the first line (past or future) whose message matches. */
  waitFor(pattern: RegExp): Promise<LogLine>;
}

export function recordingLogger(): RecordingLogger {
  const lines: LogLine[] = [];
  const waiters = new Set<{ pattern: RegExp; resolve: (l: LogLine) => void }>();
  const at =
    (level: LogLine['level']) =>
    (obj: object, msg?: string): void => {
      const line = { level, obj, msg };
      lines.push(line);
      for (const w of waiters) {
        if (w.pattern.test(msg ?? '')) {
          waiters.delete(w);
          w.resolve(line);
        }
      }
    };
  return {
    logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
    lines,
    messages: (level) =>
      lines.filter((l) => level === undefined || l.level === level).map((l) => l.msg ?? ''),
    waitFor(pattern) {
      const found = lines.find((l) => pattern.test(l.msg ?? ''));
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.add({ pattern, resolve }));
    },
  };
}
