/**
 * What the coordinator's services share: the resolved options and the in-memory parts (lease
 * tracking, claim waiters, commands, dependencies, log followers, event bus, blobs, agent snapshots,
 * the policies, the watchdog and alerts).
 */
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import { RouseError } from '../core/errors.js';
import type { Outcome, Store, Transitioned } from '../store/store.js';
import type { AgentCommands } from './agent-commands.js';
import type { AgentSnapshots } from './agent-snapshots.js';
import type { Alerts } from './alerts/alerts.js';
import type { BlobStore } from './blob-store.js';
import type { ClaimWaiters } from './claim-waiters.js';
import type { ResolvedCoordinatorOptions } from './coordinator-options.js';
import type { DependencyRegistry } from './dependency-registry.js';
import type { EventBus } from './event-bus.js';
import type { EventRelay } from './event-relay.js';
import type { LeaseTracker } from './lease-timers.js';
import type { LogWatchers } from './log-watchers.js';
import type { PolicyProvider } from './policy-registry.js';
import type { SharedDependencies } from './shared-dependencies.js';
import type { Interventions } from './watchdog/interventions.js';
import type { Watchdog } from './watchdog/watchdog.js';
import type { WriteBatcher } from './write-batcher.js';

export interface CoordinatorContext {
  readonly options: ResolvedCoordinatorOptions;
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly bus: EventBus;
  readonly leases: LeaseTracker;
  readonly waiters: ClaimWaiters;
  readonly commands: AgentCommands;
  readonly interventions: Interventions;
  /** Raise and clear alerts (grouped, notified in the background): see alerts/alerts.ts. */
  readonly alerts: Alerts;
  /** This coordinator's copy of the dependency states (read on every claim). */
  readonly dependencies: DependencyRegistry;
  /** Reports go through here: applied to the copy, saved for the other coordinators. */
  readonly sharedDependencies: SharedDependencies;
  readonly logWatchers: LogWatchers;
  /** Publishes this coordinator's transitions to the others' live event streams while they listen. */
  readonly eventRelay: EventRelay;
  readonly blobs: BlobStore;
  /** Agents' snapshots: written through the API, handed to the next incarnation at registration. */
  readonly snapshots: AgentSnapshots;
  /** Single creates and completions coalesced per event-loop turn (write-batcher.ts). */
  readonly writes: WriteBatcher;
  /** The policies in force (hot-reloaded by their registry). */
  readonly policies: PolicyProvider;
  /** Detectors, agent leases, baselines and their events. */
  readonly watchdog: Watchdog;
  /** Apply the side effects of a transition the store made (see transition-effects.ts). */
  applyTransition(t: Transitioned): void;
}

/** A failed store outcome as the error it stands for. */
export function outcomeError(o: Extract<Outcome<unknown>, { ok: false }>): RouseError {
  return new RouseError(o.code as RouseError['code'], o.message, o.details ?? {});
}
