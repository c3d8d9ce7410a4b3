/**
 * The Store contract: domain operations, split by concern into contracts that a backend composes —
 * tasks (`task-store.ts`), agents (`agent-store.ts`), coordination between coordinators
 * (`coordination.ts`), the watchdog (`watchdog-store.ts`), interventions (`intervention-store.ts`),
 * effect keys (`effect-store.ts`), agent snapshots (`snapshot-store.ts`), alerts (`alert-store.ts`) and dashboard sessions
 * (`session-store.ts`). No
 * connection, transaction or SQL types appear in any of them; SQLite and PostgreSQL implement them all
 * and pass one contract suite per concern (`src/test-support/store-contract/`).
 *
 * Rules every implementation keeps:
 * - Every transition is one atomic conditional write (compare-and-set on status and version) and
 *   appends its event to the task's history in the same transaction. Never read-check-write.
 * - Transitions are checked against the core table (`core/transitions.ts`).
 * - Time comes from the store's clock: the injected `Clock` for SQLite, the database's `now()` for
 *   PostgreSQL. Every `...At` written is that clock's.
 * - Errors are `RouseError`s built by one function per backend family so both backends produce the
 *   same codes: `not_found`, `stale_version`, `invalid_transition`, `forbidden`, `idempotency_conflict`,
 *   `conflict`, `unavailable`.
 */
import type { AgentStore } from './agent-store.js';
import type { AlertStore } from './alert-store.js';
import type { CoordinationStore } from './coordination.js';
import type { EffectStore } from './effect-store.js';
import type { InterventionStore } from './intervention-store.js';
import type { SessionStore } from './session-store.js';
import type { SnapshotStore } from './snapshot-store.js';
import type { TaskBlobStore } from './task-blob-store.js';
import type { TaskStore } from './task-store.js';
import type { WatchdogStore } from './watchdog-store.js';

export type * from './agent-store.js';
export type * from './alert-store.js';
export type * from './coordination.js';
export type * from './effect-store.js';
export type * from './intervention-store.js';
export type * from './session-store.js';
export type * from './snapshot-store.js';
export type * from './task-blob-store.js';
export type * from './task-store.js';
export type * from './watchdog-store.js';

/** What every backend has besides the contracts. */
export interface StoreBase {
  readonly kind: 'sqlite' | 'postgres';
  /** The store's clock (see the rules above). */
  now(): Promise<number>;
  /** Throws `unavailable` when the store cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface Store
  extends StoreBase,
    TaskStore,
    AgentStore,
    CoordinationStore,
    WatchdogStore,
    EffectStore,
    TaskBlobStore,
    InterventionStore,
    SnapshotStore,
    AlertStore,
    SessionStore {}
