/** `rouse policy check <file>`: validate a policy file locally (the parser the coordinator uses). */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { checkPolicies, formatPolicyError } from '../../core/policies/check-policies.js';
import { type CliContext, CliError, EXIT } from '../context.js';
import { createStyle } from '../format/style.js';

export interface PolicyCheckOptions {
  json?: boolean;
}

export async function policyCheck(ctx: CliContext, file: string, opts: PolicyCheckOptions): Promise<number> {
  const path = resolve(ctx.deps.cwd, file);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`, EXIT.usage);
  }
  const result = checkPolicies(text, file);
  if (opts.json) {
    ctx.printJson(result);
    return result.valid ? EXIT.ok : EXIT.error;
  }
  const style = createStyle(ctx.io.color);
  if (!result.valid) {
    for (const e of result.errors) ctx.io.err(`${formatPolicyError(e)}\n`);
    ctx.io.err(`${style.red(`${file} is not valid`)}: ${result.errors.length} error(s)\n`);
    return EXIT.error;
  }
  const names = result.policies.map((p) => `${p.name} (${p.agentType})`).join(', ');
  ctx.print(
    `${style.green('ok')} ${file}: ${result.policies.length} polic${result.policies.length === 1 ? 'y' : 'ies'}: ${names}`,
  );
  return EXIT.ok;
}
