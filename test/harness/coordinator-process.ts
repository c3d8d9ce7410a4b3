/**
 * A real `rouse serve` child process on a SQLite file, with known tokens and a fixed port so it can be
 * SIGKILLed and restarted on the same address and data directory.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.mjs';
import { type Spawned, spawnNode } from './processes.js';
import { tempDir } from './temp-dir.js';
import { waitFor } from './wait.js';

export const ROUSE_BIN = fileURLToPath(new URL('../../packages/server/bin/rouse.js', import.meta.url));

export interface CoordinatorProcess {
  url: string;
  port: number;
  dataDir: string;
  adminToken: string;
  agentToken: string;
  child: Spawned;
  /** SIGKILL (or another signal) and wait for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Start again on the same port and data directory (after a kill). */
  restart(): Promise<void>;
}

export interface CoordinatorProcessOptions {
  dataDir?: string;
  port?: number;
  extraArgs?: string[];
  env?: Record<string, string>;
  /** Several coordinators sharing one store must share their tokens. @default random */
  adminToken?: string;
  agentToken?: string;
}

export async function startCoordinatorProcess(
  options: CoordinatorProcessOptions = {},
): Promise<CoordinatorProcess> {
  const dataDir = options.dataDir ?? tempDir('rouse-coord-');
  const port = options.port ?? (await freePort());
  const adminToken = options.adminToken ?? `rsk_admin_${randomBytes(16).toString('base64url')}`;
  const agentToken = options.agentToken ?? `rsk_enroll_${randomBytes(16).toString('base64url')}`;
  const url = `http://127.0.0.1:${port}`;
  const launch = async (): Promise<Spawned> => {
    const child = spawnNode(
      [
        ROUSE_BIN,
        'serve',
        '--port',
        String(port),
        '--data-dir',
        dataDir,
        '--log-level',
        'warn',
        ...(options.extraArgs ?? []),
      ],
      { ROUSE_ADMIN_TOKEN: adminToken, ROUSE_AGENT_TOKEN: agentToken, ...options.env },
    );
    await waitFor(
      async () => {
        if (child.proc.exitCode !== null) throw new Error(`rouse serve exited: ${child.errLines.join('\n')}`);
        const res = await fetch(`${url}/readyz`);
        return res.ok;
      },
      { what: `rouse serve on ${url}`, timeoutMs: 30_000 },
    );
    return child;
  };
  const handle: CoordinatorProcess = {
    url,
    port,
    dataDir,
    adminToken,
    agentToken,
    child: await launch(),
    async kill(signal = 'SIGKILL') {
      handle.child.kill(signal);
      await handle.child.exited;
    },
    async restart() {
      handle.child = await launch();
    },
  };
  return handle;
}

export const dbPath = (dataDir: string) => join(dataDir, 'rouse.db');
