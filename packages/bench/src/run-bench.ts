/**
 * The bench runner behind `npm run bench` (`main.ts` is the entry point): runs the workloads against
 * real `rouse serve` child processes, prints a table (workload | metric | value | target | peer | ok?)
 * and writes `bench-results/<timestamp>.json` and
 * `bench-results/latest.json`. A report, not a test: missed targets do not change the exit code;
 * a workload that could not run does (exit 1).
 *
 *   node packages/bench/dist/main.js [--only throughput,latency,detection,enqueue,heartbeats,fleet,fleet-floor,failover,supervisor,recovery,adapters,dashboard]
 *     [--quick] [--json] [--store sqlite|postgres|postgres-2] [--worker sdk|raw] [--out bench-results]
 *     [--cpu-prof]
 *
 * `fleet` is the watchdog at scale: 10,000 monitored agents (quick: 1,000) in a few child processes
 * beating every 5 s under a policy file; heartbeat latency, beats/s, the coordinator's CPU and the
 * conditions it opens in a healthy phase, then how late it marks a SIGSTOPped process's agents lost
 * and a non-progressing process's agents stalled (`fleet.ts`).
 *
 * `supervisor` is one `rouse supervise` with 200 plain children (quick: 50): the supervisor's CPU and
 * the coordinator's per supervisor heartbeat (`supervisor.ts`). `recovery` is the watchdog acting: plain
 * programs under a supervisor stall now and then; from each condition opening to the supervisor's
 * acknowledgement of the signal the ladder sent (`recovery.ts`).
 *
 * `--store postgres` runs on PostgreSQL (DATABASE_URL; `npm run bench` starts a private one when unset);
 * `postgres-2` puts two coordinators on it behind a round-robin balancer. `failover` starts its own
 * coordinators on the shared store, so it runs on either, and is skipped on SQLite.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { adapters } from './adapters.js';
import { dashboard } from './dashboard.js';
import { detection } from './detection.js';
import { enqueue } from './enqueue.js';
import { failover } from './failover.js';
import { fleet } from './fleet.js';
import { fleetFloor } from './fleet-floor.js';
import { heartbeats } from './heartbeats.js';
import { latency } from './latency.js';
import { startNoiseMeter } from './proc.js';
import { recovery } from './recovery.js';
import { type BenchReport, environment, formatTable, withVerdicts, writeReport } from './report.js';
import { STORES } from './stores.js';
import { supervisor } from './supervisor.js';
import { throughput } from './throughput.js';
import type { Workload, WorkloadContext, WorkloadResult } from './workload.js';

/** In the order they run. */
const WORKLOADS: Record<string, Workload> = {
  throughput,
  latency,
  detection,
  enqueue,
  heartbeats,
  fleet,
  'fleet-floor': fleetFloor,
  failover,
  supervisor,
  recovery,
  adapters,
  dashboard,
};

const HELP = `Usage: npm run bench -- [options]

Runs Rouse's benchmark workloads against a real coordinator process and reports the numbers.

Options:
  --only <list>     comma-separated workloads: ${Object.keys(WORKLOADS).join(', ')} (default: all)
                    fleet: 10,000 monitored agents (quick: 1,000) beating every 5 s under a watchdog
                    policy; heartbeat latency, beats/s, coordinator CPU and conditions over a healthy
                    phase (2 min; quick 20 s), then lost detection (100 agents SIGSTOPped) and stall
                    detection (100 agents whose progress stops), each as the excess over its due time
                    fleet-floor: the same agents against a bare HTTP server that spends 0, 150 and
                    250 µs of CPU a beat, and 250 µs in 2 ms batches (45 s each; quick 10 s): the
                    heartbeat latency this machine and these clients allow, to read next to fleet
                    supervisor: one rouse supervise with 200 plain children (quick: 50) beating once a
                    second; its CPU, and the coordinator's CPU per supervisor heartbeat
                    recovery: 20 plain programs under a supervisor stall now and then (quick: 5);
                    condition opened → the supervisor's acknowledgement of the ladder's signal
                    adapters: codex exec bare vs as tasks through rouse agent --adapter codex, on a
                    fake model (wall and CPU per task), and a hung turn woken and resumed; needs the
                    Codex CLI at ROUSE_CODEX_BIN (npm run bench installs the tests' pinned one)
                    dashboard: first render of Overview, Tasks and Task with 100,000 tasks and 1,000
                    agents (needs chromium), throughput with five live dashboards vs none, asset sizes
  --quick           smaller counts, for a CI smoke run (< 30 s per workload; fleet about 1.5 min, as it
                    waits out its 15 s lease and 20 s stall threshold)
  --json            print the JSON report on stdout instead of the table
  --store <name>    store behind the coordinator: ${Object.keys(STORES).join(', ')} (default: sqlite);
                    postgres uses DATABASE_URL (npm run bench starts one when unset); postgres-2 runs two
                    coordinators on it behind a round-robin balancer
  --worker <mode>   sdk (the SDK Worker, default) or raw (a bare claim loop, for diagnosis)
  --no-ladder       fleet: a policy without a recovery ladder (to compare its cost)
  --out <dir>       where the JSON reports go (default: bench-results)
  --cpu-prof        profile the coordinator (node --cpu-prof) into <out>/profiles/<timestamp>/ and
                    print its hot spots over each measured window
  -h, --help        this help
`;

/** Run the bench with CLI arguments (without the node and script paths); resolves with the exit code. */
export async function runBench(argv: string[]): Promise<number> {
  let values: ReturnType<typeof parse>['values'];
  try {
    values = parse(argv).values;
  } catch (err) {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n\n${HELP}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const names = values.only ? values.only.split(',').map((s) => s.trim()) : Object.keys(WORKLOADS);
  const unknown = names.filter((n) => !(n in WORKLOADS));
  if (unknown.length > 0) {
    process.stderr.write(
      `bench: unknown workload ${unknown.join(', ')}; known: ${Object.keys(WORKLOADS).join(', ')}\n`,
    );
    return 2;
  }
  const store = STORES[values.store ?? 'sqlite'];
  if (!store) {
    process.stderr.write(`bench: unknown store ${values.store}; known: ${Object.keys(STORES).join(', ')}\n`);
    return 2;
  }
  const workerMode = values.worker ?? 'sdk';
  if (workerMode !== 'sdk' && workerMode !== 'raw') {
    process.stderr.write(`bench: --worker must be sdk or raw, got ${workerMode}\n`);
    return 2;
  }

  const startedAt = new Date().toISOString();
  const outDir = values.out ?? 'bench-results';
  let cpuProfileDir: string | undefined;
  if (values['cpu-prof']) {
    cpuProfileDir = resolve(join(outDir, 'profiles', startedAt.replace(/[:.]/g, '-')));
    mkdirSync(cpuProfileDir, { recursive: true });
  }
  const env = environment();
  const ctx: WorkloadContext = {
    store,
    quick: values.quick ?? false,
    workerMode,
    ladder: !(values['no-ladder'] ?? false),
    ...(cpuProfileDir ? { cpuProfileDir } : {}),
    log: (message) => process.stderr.write(`[bench] ${message}\n`),
  };

  const results: WorkloadResult[] = [];
  try {
    await store.setup?.(ctx.log);
  } catch (err) {
    process.stderr.write(
      `bench: store ${store.name} could not start: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    return 1;
  }
  try {
    for (const name of names) {
      const t = performance.now();
      ctx.log(`${name}: start (store ${store.name}${ctx.quick ? ', quick' : ''})`);
      const noise = startNoiseMeter(store.serverCpuMs?.bind(store));
      let result: WorkloadResult;
      try {
        result = await WORKLOADS[name]!(ctx);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        ctx.log(`${name}: FAILED: ${message}`);
        result = { workload: name, store: store.name, metrics: [], details: {}, error: message };
      }
      const machine = noise();
      if (machine) {
        // Other engineers' builds and tests share these cores: say how much of the machine they took.
        result.details.machine = machine;
        result.metrics.push({
          workload: name,
          metric: 'noise: CPU used by other processes',
          value: machine.otherProcessesCpuPercent,
          unit: '% of machine',
        });
        if (machine.storeServerCpuPercent !== undefined) {
          result.metrics.push({
            workload: name,
            metric: 'store server (PostgreSQL) CPU, whole workload',
            value: machine.storeServerCpuPercent,
            unit: '% of machine',
          });
        }
      }
      results.push(result);
      ctx.log(`${name}: done in ${Math.round(performance.now() - t)} ms`);
    }
  } finally {
    await store.teardown?.();
  }

  const report: BenchReport = {
    startedAt,
    finishedAt: new Date().toISOString(),
    quick: ctx.quick,
    store: store.name,
    workerMode,
    environment: env,
    results: withVerdicts(results),
    ...(cpuProfileDir ? { cpuProfileDir } : {}),
  };
  const file = writeReport(outDir, report);
  if (values.json) {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    process.stdout.write(`${formatTable(report)}\n\nWritten to ${file}\n`);
    if (cpuProfileDir) process.stdout.write(`Coordinator CPU profiles in ${cpuProfileDir}\n`);
  }
  return results.some((r) => r.error) ? 1 : 0;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      only: { type: 'string' },
      quick: { type: 'boolean' },
      json: { type: 'boolean' },
      store: { type: 'string' },
      worker: { type: 'string' },
      out: { type: 'string' },
      'cpu-prof': { type: 'boolean' },
      'no-ladder': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}
