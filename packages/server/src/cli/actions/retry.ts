/** `rouse retry <id>`: give a final failed/timeout task one more attempt. */
import { createClient } from '../connection.js';
import { type CliContext, EXIT } from '../context.js';
import { createStyle } from '../format/style.js';
import { formatAttempts } from '../format/task.js';

export interface RetryOptions {
  json?: boolean;
  url?: string;
  token?: string;
  dataDir?: string;
}

export async function retry(ctx: CliContext, id: string, opts: RetryOptions): Promise<number> {
  const { client } = createClient(ctx, opts);
  const task = await client.retryTask(id);
  if (opts.json) {
    ctx.printJson({ task });
    return EXIT.ok;
  }
  const style = createStyle(ctx.io.color);
  ctx.print(
    `retrying ${style.bold(task.id)} (${task.type}): ${style.status(task.status)}, attempts ${formatAttempts(task)}`,
  );
  return EXIT.ok;
}
