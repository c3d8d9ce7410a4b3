/**
 * Runs a real coordinator for a workload: `rouse serve` as a child process on a free port, with a
 * fresh temporary data directory and known tokens, and stops it again. A store with several
 * coordinators (`BenchStore.coordinators`) gets that many, sharing tokens and one namespace, behind a
 * round-robin balancer whose address stands for them all.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBalancer } from './balancer.js';
import type { BenchStore } from './stores.js';

/** The `rouse` CLI of the installed `@rouse/server`: its `bin/rouse.js`, beside the `dist/` of its entry. */
export const ROUSE_BIN = fileURLToPath(new URL('../bin/rouse.js', import.meta.resolve('@rouse/server')));

export interface CoordinatorProcessOptions {
  store: BenchStore;
  /** @default 'warn' */
  logLevel?: string;
  /** Write a CPU profile of the coordinator (`node --cpu-prof`) into this directory; read it after `stop()`. */
  cpuProfileDir?: string;
  /** Keep the data directory after stop (for inspection). @default false */
  keepDataDir?: boolean;
  /** How long to wait for `/readyz`. @default 15000 */
  startTimeoutMs?: number;
  /** Extra `rouse serve` arguments. */
  extraArgs?: string[];
  /**
   * Files written into each coordinator's data directory before it starts, by name (e.g.
   * `policies.yaml`, which `rouse serve` reads from there).
   */
  dataFiles?: Record<string, string>;
}

export interface CoordinatorProcess {
  readonly url: string;
  readonly port: number;
  /** The (first) coordinator's pid; `pids` has them all. */
  readonly pid: number;
  readonly pids: readonly number[];
  readonly dataDir: string;
  readonly adminToken: string;
  /** Enrollment token for agents (`ROUSE_AGENT_TOKEN`). */
  readonly agentToken: string;
  /**
   * SIGTERM, then SIGKILL after `graceMs`; removes the data directory unless kept. Resolves with the
   * CPU profile's path when one was asked for and written.
   */
  stop(graceMs?: number): Promise<{ cpuProfile: string | null }>;
  /** SIGKILL (a coordinator that dies); `stop()` still cleans up after it. */
  kill(): Promise<void>;
  /** The last few kB of its log and stderr, e.g. the cause of a 500, for an error message. */
  logTail(): string;
}

/** A port that was free a moment ago (the OS picks it; we release it for the child). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export async function startCoordinator(options: CoordinatorProcessOptions): Promise<CoordinatorProcess> {
  const count = options.store.coordinators ?? 1;
  const shared = {
    adminToken: `bench-admin-${randomBytes(12).toString('hex')}`,
    agentToken: `bench-agent-${randomBytes(12).toString('hex')}`,
    extraArgs: [...(options.store.namespaceArgs?.() ?? []), ...(options.extraArgs ?? [])],
  };
  if (count === 1) return startOne(options, shared);
  const all: CoordinatorProcess[] = [];
  try {
    for (let i = 0; i < count; i++) {
      // Only the first is profiled: one profile per workload, as with one coordinator.
      all.push(await startOne(i === 0 ? options : { ...options, cpuProfileDir: undefined }, shared));
    }
  } catch (err) {
    await Promise.all(all.map((c) => c.stop()));
    throw err;
  }
  const balancer = await startBalancer(all);
  const first = all[0]!;
  return {
    url: balancer.url,
    port: balancer.port,
    pid: first.pid,
    pids: all.map((c) => c.pid),
    dataDir: first.dataDir,
    adminToken: shared.adminToken,
    agentToken: shared.agentToken,
    async stop(graceMs) {
      await balancer.close();
      const stopped = await Promise.all(all.map((c) => c.stop(graceMs)));
      return stopped[0]!;
    },
    async kill() {
      await Promise.all(all.map((c) => c.kill()));
    },
    logTail: () => all.map((c, i) => `[coordinator ${i}]\n${c.logTail()}`).join('\n'),
  };
}

/** Start one `rouse serve` child with the given tokens and extra arguments. */
export async function startOne(
  options: CoordinatorProcessOptions,
  shared: { adminToken: string; agentToken: string; extraArgs: string[] },
): Promise<CoordinatorProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rouse-bench-'));
  for (const [name, text] of Object.entries(options.dataFiles ?? {}))
    writeFileSync(join(dataDir, name), text);
  const port = await freePort();
  const { adminToken, agentToken } = shared;
  const args = [
    ...(options.cpuProfileDir ? ['--cpu-prof', '--cpu-prof-dir', options.cpuProfileDir] : []),
    ROUSE_BIN,
    'serve',
    '--port',
    String(port),
    '--host',
    '127.0.0.1',
    '--data-dir',
    dataDir,
    '--log-level',
    options.logLevel ?? 'warn',
    ...options.store.serveArgs(dataDir),
    ...shared.extraArgs,
  ];
  const child = spawn(process.execPath, args, {
    env: {
      ...process.env,
      ...options.store.serveEnv?.(),
      ROUSE_ADMIN_TOKEN: adminToken,
      ROUSE_AGENT_TOKEN: agentToken,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Its log (stdout, at the given level) and its stderr, the last few kB of both.
  let stderr = '';
  for (const stream of [child.stdout, child.stderr]) {
    stream?.setEncoding('utf8');
    stream?.on('data', (s: string) => {
      stderr = (stderr + s).slice(-8000);
    });
  }
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;

  try {
    await waitHealthy(url, child, options.startTimeoutMs ?? 15_000, () => stderr);
  } catch (err) {
    child.kill('SIGKILL');
    if (!options.keepDataDir) rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }

  return {
    url,
    port,
    pid: child.pid!,
    pids: [child.pid!],
    dataDir,
    adminToken,
    agentToken,
    async stop(graceMs = 5000) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      if (!options.keepDataDir) rmSync(dataDir, { recursive: true, force: true });
      return { cpuProfile: options.cpuProfileDir ? findProfile(options.cpuProfileDir, child.pid!) : null };
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
    logTail: () => stderr,
  };
}

/** `CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile`, written by node on a clean exit. */
function findProfile(dir: string, pid: number): string | null {
  const name = readdirSync(dir).find((f) => f.endsWith('.cpuprofile') && f.split('.')[3] === String(pid));
  return name ? join(dir, name) : null;
}

async function waitHealthy(
  url: string,
  child: ChildProcess,
  timeoutMs: number,
  stderr: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `rouse serve exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${stderr()}`,
      );
    }
    try {
      const res = await fetch(`${url}/readyz`);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      throw new Error(`rouse serve did not answer /readyz within ${timeoutMs} ms:\n${stderr()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
