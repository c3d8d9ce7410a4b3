/**
 * `rouse dashboard`: print a one-time login URL for the coordinator's dashboard (admin token needed),
 * or open it in the browser with `--open`. The URL carries a code that signs in once, within 5
 * minutes — never the token.
 */
import { spawn } from 'node:child_process';
import { createClient } from '../connection.js';
import { type CliContext, EXIT } from '../context.js';

export interface DashboardOptions {
  readonly?: boolean;
  open?: boolean;
  json?: boolean;
  url?: string;
  token?: string;
  dataDir?: string;
}

/** The platform's "open this URL" command. */
function opener(): [string, string[]] {
  if (process.platform === 'darwin') return ['open', []];
  if (process.platform === 'win32') return ['cmd', ['/c', 'start', '""']];
  return ['xdg-open', []];
}

export async function dashboard(ctx: CliContext, opts: DashboardOptions): Promise<number> {
  const { client, conn } = createClient(ctx, opts);
  const code = await client.createLoginCode(opts.readonly ? 'readonly' : 'admin');
  const url = `${conn.url.replace(/\/+$/, '')}${code.path}`;
  if (opts.json) {
    ctx.printJson({ url, role: code.role, expiresAt: code.expiresAt });
    return EXIT.ok;
  }
  ctx.print(url);
  if (opts.open) {
    const [cmd, args] = opener();
    await new Promise<void>((resolve) => {
      const child = spawn(cmd, [...args, url], { stdio: 'ignore', detached: true });
      child.once('error', (err) => {
        ctx.warn(`could not open a browser (${cmd}: ${err.message}); open the URL above yourself`);
        resolve();
      });
      child.once('spawn', () => {
        child.unref();
        resolve();
      });
    });
  }
  return EXIT.ok;
}
