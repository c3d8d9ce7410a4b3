/**
 * The store a workload runs against. Every workload takes one, so the same workloads run on SQLite
 * now and on PostgreSQL (through one coordinator or several) when that backend lands (issue 3).
 */

export interface BenchStore {
  /** Short name used in the report, e.g. `sqlite`. */
  readonly name: string;
  /** Extra `rouse serve` arguments selecting this store, given the coordinator's data directory. */
  serveArgs(dataDir: string): string[];
  /** Extra environment for `rouse serve`. */
  serveEnv?(): Record<string, string>;
}

/** The embedded default: a SQLite file (WAL) in the coordinator's temporary data directory. */
export const sqliteStore: BenchStore = {
  name: 'sqlite',
  serveArgs: () => [],
};

/** Stores selectable with `--store`. PostgreSQL is added here by issue 3. */
export const STORES: Record<string, BenchStore> = {
  sqlite: sqliteStore,
};
