/**
 * The store a workload runs against. Every workload takes one, so the same workloads run on SQLite
 * and on PostgreSQL, through one coordinator or two behind a round-robin balancer (issue 3).
 */
import { type BenchPostgres, startBenchPostgres } from './postgres-server.js';

export interface BenchStore {
  /** Short name used in the report, e.g. `sqlite`. */
  readonly name: string;
  /** Extra `rouse serve` arguments selecting this store, given the coordinator's data directory. */
  serveArgs(dataDir: string): string[];
  /** Extra environment for `rouse serve`. */
  serveEnv?(): Record<string, string>;
  /** Coordinators sharing the store, behind one round-robin address (`balancer.ts`). @default 1 */
  readonly coordinators?: number;
  /**
   * Extra `rouse serve` arguments naming a fresh namespace (a PostgreSQL schema) that the
   * coordinators of ONE workload share; called once per `startCoordinator`.
   */
  namespaceArgs?(): string[];
  /** Start what the store needs (a PostgreSQL server) before the first workload. */
  setup?(log: (message: string) => void): Promise<void>;
  /** Stop it after the last. */
  teardown?(): Promise<void>;
  /**
   * CPU time the store's own server processes have used so far, in ms, when they run on this machine
   * (an embedded PostgreSQL); null or absent otherwise (SQLite runs inside the coordinator).
   */
  serverCpuMs?(): number | null;
  /** The targets for this store (a metric without a target is reported, not judged). */
  readonly targets: BenchTargets;
}

export interface BenchTargets {
  /** Throughput, tasks/s (issue 2: SQLite 6,000; issue 3: PostgreSQL through one coordinator 4,800). */
  throughputPerS?: number;
  /** Latency created→completed at 500/s, p50 and p99 in ms. */
  latencyP50Ms?: number;
  latencyP99Ms?: number;
  /** Enqueue over HTTP, tasks/s: batched and one at a time (issue 2: 20,000 and 5,000). */
  enqueueBatchedPerS?: number;
  enqueueSinglePerS?: number;
  /** Fleet: the coordinator's CPU watching 10,000 agents beating every 5 s, in cores (SQLite: 0.5). */
  fleetCoordinatorCores?: number;
}

/** The embedded default: a SQLite file (WAL) in the coordinator's temporary data directory. */
export const sqliteStore: BenchStore = {
  name: 'sqlite',
  serveArgs: () => [],
  targets: {
    throughputPerS: 6000,
    latencyP50Ms: 2,
    latencyP99Ms: 10,
    enqueueBatchedPerS: 20_000,
    enqueueSinglePerS: 5000,
    fleetCoordinatorCores: 0.5,
  },
};

/** PostgreSQL (default settings: `synchronous_commit=on`), a fresh schema per workload. */
export function postgresStore(name: string, coordinators: number, targets: BenchTargets): BenchStore {
  let server: BenchPostgres | null = null;
  return {
    name,
    coordinators,
    targets,
    serveArgs: () => [],
    namespaceArgs() {
      if (server === null) throw new Error(`store ${name}: setup() was not called`);
      return ['--store', server.url, '--pg-schema', server.freshSchema()];
    },
    async setup(log) {
      server ??= await startBenchPostgres(log);
    },
    async teardown() {
      await server?.stop();
      server = null;
    },
    serverCpuMs: () => server?.serverCpuMs() ?? null,
  };
}

/** Stores selectable with `--store`. */
export const STORES: Record<string, BenchStore> = {
  sqlite: sqliteStore,
  /** One coordinator on PostgreSQL. */
  postgres: postgresStore('postgres', 1, { throughputPerS: 4800, latencyP99Ms: 20 }),
  /** Two coordinators on one PostgreSQL behind a round-robin balancer. */
  'postgres-2': postgresStore('postgres-2', 2, {}),
};
