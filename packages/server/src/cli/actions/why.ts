/**
 * `rouse why <id>`: why is this task where it is, or this agent in its status? The coordinator's
 * diagnosis, made readable.
 */
import { createClient } from '../connection.js';
import { type CliContext, EXIT } from '../context.js';
import { renderDiagnosis } from '../format/diagnosis.js';
import { createStyle } from '../format/style.js';

export interface WhyOptions {
  json?: boolean;
  url?: string;
  token?: string;
  dataDir?: string;
}

export async function why(ctx: CliContext, id: string, opts: WhyOptions): Promise<number> {
  const { client } = createClient(ctx, opts);
  // Agent ids start with agt_, task ids with tsk_: one command answers for both.
  const diagnosis = id.startsWith('agt_') ? await client.diagnoseAgent(id) : await client.diagnose(id);
  if (opts.json) {
    ctx.printJson(diagnosis);
    return EXIT.ok;
  }
  for (const line of renderDiagnosis(diagnosis, ctx.now(), createStyle(ctx.io.color))) ctx.print(line);
  return EXIT.ok;
}
