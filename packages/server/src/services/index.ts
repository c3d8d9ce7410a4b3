/** The coordinator services (docs/design.md §7): assembled by `createCoordinator`. */
export { AGENT_TOKEN_PREFIX, type AuthTokens, hashToken, newAgentToken } from './auth.js';
export type { BlobStore } from './blob-store.js';
export type { ClaimWakeups } from './claim-waiters.js';
export type { Caller, Coordinator, DependencyStatus, StoredResult } from './coordinator.js';
export {
  COORDINATOR_DEFAULTS,
  type CoordinatorOptions,
  type ResolvedCoordinatorOptions,
  resolveCoordinatorOptions,
} from './coordinator-options.js';
export { type CoordinatorService, createCoordinator } from './create-coordinator.js';
export type { EventBus } from './event-bus.js';
export { type IdPrefix, newId } from './ids.js';
export type { DueLease, LeaseTracker } from './lease-timers.js';
