/** `rouse logs <id>`: a task's log lines, optionally following new ones live. */
import type { LogLine } from '@rouse/protocol';
import { createClient } from '../connection.js';
import { type CliContext, EXIT } from '../context.js';
import { followUntilInterrupted } from '../follow.js';
import { createStyle, type Style } from '../format/style.js';
import { formatClock } from '../format/time.js';

export interface LogsOptions {
  follow?: boolean;
  after?: number;
  json?: boolean;
  url?: string;
  token?: string;
  dataDir?: string;
}

export function formatLogLine(l: LogLine, style: Style): string {
  const stream = l.stream === 'stderr' ? style.red(l.stream) : style.dim(l.stream);
  return `${style.dim(formatClock(l.at))} ${style.dim(`#${l.attempt}`)} ${stream}  ${l.text}`;
}

export async function logs(ctx: CliContext, id: string, opts: LogsOptions): Promise<number> {
  const { client } = createClient(ctx, opts);
  const style = createStyle(ctx.io.color);
  if (!opts.follow) {
    // Every line after `after`, a page (up to 1000 lines) at a time.
    const all: LogLine[] = [];
    let printed = 0;
    let truncated = false;
    for (let after = opts.after; ; ) {
      const res = await client.getLogs(id, after === undefined ? {} : { after });
      truncated ||= res.truncated === true;
      if (res.lines.length === 0) break;
      if (opts.json) all.push(...res.lines);
      else for (const l of res.lines) ctx.print(formatLogLine(l, style));
      printed += res.lines.length;
      after = res.lines[res.lines.length - 1]!.seq;
    }
    if (opts.json) {
      ctx.printJson({ lines: all, ...(truncated ? { truncated } : {}) });
      return EXIT.ok;
    }
    if (printed === 0) ctx.warn('(no log lines)');
    if (truncated) ctx.warn('(the log reached its size cap: later lines were dropped)');
    return EXIT.ok;
  }
  // Each session resumes after the last line printed; the stream ends when the task is final.
  let after = opts.after;
  await followUntilInterrupted(ctx, async (signal, connected) => {
    await client.getTask(id);
    connected();
    const lines = client.followLogs(id, { ...(after === undefined ? {} : { after }), signal });
    const print = (l: LogLine): void => {
      ctx.print(opts.json ? JSON.stringify(l) : formatLogLine(l, style));
      after = l.seq;
    };
    for await (const l of lines) print(l);
    if (signal.aborted) return 'done';
    // A coordinator that shuts down ends the stream too: only a final task is the end, and then
    // whatever the stream did not carry is read page by page.
    if (!(await client.getTask(id)).final) return 'lost';
    for (;;) {
      const page = await client.getLogs(id, after === undefined ? {} : { after });
      if (page.lines.length === 0) return 'done';
      for (const l of page.lines) print(l);
    }
  });
  return EXIT.ok;
}
