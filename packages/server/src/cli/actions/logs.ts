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
    const res = await client.getLogs(id, opts.after === undefined ? {} : { after: opts.after });
    if (opts.json) {
      ctx.printJson({ lines: res.lines });
      return EXIT.ok;
    }
    for (const l of res.lines) ctx.print(formatLogLine(l, style));
    if (res.lines.length === 0) ctx.warn('(no log lines)');
    return EXIT.ok;
  }
  // Each session resumes after the last line printed; the stream ends when the task is final.
  let after = opts.after;
  await followUntilInterrupted(ctx, async (signal, connected) => {
    await client.getTask(id);
    connected();
    const lines = client.followLogs(id, { ...(after === undefined ? {} : { after }), signal });
    for await (const l of lines) {
      ctx.print(opts.json ? JSON.stringify(l) : formatLogLine(l, style));
      after = l.seq;
    }
    // A coordinator that shuts down ends the stream too: only a final task is the end.
    return signal.aborted || (await client.getTask(id)).final ? 'done' : 'lost';
  });
  return EXIT.ok;
}
