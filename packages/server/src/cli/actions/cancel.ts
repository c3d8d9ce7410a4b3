/** `rouse cancel <id>`: cancel a task that is not final; its holder learns it on its next heartbeat. */
import { createClient } from '../connection.js';
import { type CliContext, EXIT } from '../context.js';
import { createStyle } from '../format/style.js';

export interface CancelOptions {
  reason?: string;
  json?: boolean;
  url?: string;
  token?: string;
  dataDir?: string;
}

export async function cancel(ctx: CliContext, id: string, opts: CancelOptions): Promise<number> {
  const { client } = createClient(ctx, opts);
  const task = await client.cancelTask(id, opts.reason);
  if (opts.json) {
    ctx.printJson({ task });
    return EXIT.ok;
  }
  const style = createStyle(ctx.io.color);
  ctx.print(
    `${style.status(task.status)} ${style.bold(task.id)} (${task.type})${opts.reason ? `: ${opts.reason}` : ''}`,
  );
  return EXIT.ok;
}
