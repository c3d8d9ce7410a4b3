/**
 * The Store contract suites, one per concern of the Store (tasks, agents, coordination, watchdog,
 * interventions, effect keys, task blobs, agent snapshots, alerts): every backend runs them all and must pass them unchanged. They define vitest `describe`/`it`
 * blocks, so call them from a test file:
 *
 * ```ts
 * runStoreContract('sqlite :memory:', async (clock) => {
 *   const store = createSqliteStore({ path: ':memory:', clock });
 *   return { store, cleanup: () => store.close() };
 * });
 * ```
 *
 * `makeStore` gets a fresh `ManualClock` per test and must return an empty store whose time is that
 * clock's (a PostgreSQL backend under test reads it instead of `now()`); `cleanup` closes it and
 * removes whatever it created.
 */
import { describe } from 'vitest';
import { agentCommandsContract } from './agent-commands.js';
import { agentsContract } from './agents.js';
import { alertsContract } from './alerts.js';
import { shardsContract } from './coordination.js';
import { dashboardContract } from './dashboard.js';
import { effectsContract } from './effects.js';
import { type MakeStore, useHarness } from './harness.js';
import { interventionsContract } from './interventions.js';
import { snapshotsContract } from './snapshots.js';
import { taskBlobsContract } from './task-blobs.js';
import { runTaskStoreContract } from './tasks.js';
import { watchdogContract } from './watchdog.js';

export type { MakeStore } from './harness.js';

export function runAgentStoreContract(name: string, makeStore: MakeStore): void {
  describe(`Agent store contract: ${name}`, () => {
    const h = useHarness(makeStore);
    agentsContract(h);
    agentCommandsContract(h);
  });
}

export function runCoordinationStoreContract(name: string, makeStore: MakeStore): void {
  describe(`Coordination store contract: ${name}`, () => shardsContract(useHarness(makeStore)));
}

export function runWatchdogStoreContract(name: string, makeStore: MakeStore): void {
  describe(`Watchdog store contract: ${name}`, () => watchdogContract(useHarness(makeStore)));
}

export function runEffectStoreContract(name: string, makeStore: MakeStore): void {
  describe(`Effect store contract: ${name}`, () => effectsContract(useHarness(makeStore)));
}

export function runTaskBlobStoreContract(name: string, makeStore: MakeStore): void {
  describe(`Task blob store contract: ${name}`, () => taskBlobsContract(useHarness(makeStore)));
}

export function runInterventionStoreContract(name: string, makeStore: MakeStore): void {
  describe(`Intervention store contract: ${name}`, () => interventionsContract(useHarness(makeStore)));
}

export function runSnapshotStoreContract(name: string, makeStore: MakeStore): void {
  describe(`Snapshot store contract: ${name}`, () => snapshotsContract(useHarness(makeStore)));
}

export function runAlertStoreContract(name: string, makeStore: MakeStore): void {
  describe(`Alert store contract: ${name}`, () => alertsContract(useHarness(makeStore)));
}

export function runDashboardStoreContract(name: string, makeStore: MakeStore): void {
  describe(`Dashboard store contract: ${name}`, () => dashboardContract(useHarness(makeStore)));
}

export { runTaskStoreContract };

/** All the suites. */
export function runStoreContract(name: string, makeStore: MakeStore): void {
  runTaskStoreContract(name, makeStore);
  runAgentStoreContract(name, makeStore);
  runCoordinationStoreContract(name, makeStore);
  runWatchdogStoreContract(name, makeStore);
  runEffectStoreContract(name, makeStore);
  runTaskBlobStoreContract(name, makeStore);
  runInterventionStoreContract(name, makeStore);
  runSnapshotStoreContract(name, makeStore);
  runAlertStoreContract(name, makeStore);
  runDashboardStoreContract(name, makeStore);
}
