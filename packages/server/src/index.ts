/**
 * @rouse/server: the coordinator as a library. `startRouseServer()` runs everything; the parts
 * (`createSqliteStore`, `createCoordinator`, `buildApp`) can be assembled by hand for tests and embedding.
 */

export { type BuildAppOptions, buildApp } from './api/app.js';
export {
  type ApiLimits,
  DEFAULT_API_LIMITS,
  type ResolvedApiLimits,
  resolveApiLimits,
} from './api/limits.js';
export { ApiMetrics } from './api/metrics.js';
export { generateToken, loadToken, TOKEN_PREFIXES, type TokenName } from './config/tokens.js';
export {
  type BackoffOptions,
  backoffDelayMs,
  DEFAULT_BACKOFF,
  type ResolvedBackoffOptions,
  resolveBackoffOptions,
} from './core/backoff.js';
export { type Clock, ManualClock, type TimerHandle } from './core/clock.js';
export {
  IdempotencyConflictError,
  InvalidTransitionError,
  isRouseError,
  NotFoundError,
  RouseError,
  StaleVersionError,
  UnavailableError,
  ValidationError,
} from './core/errors.js';
export { DEFAULT_TIMING, resolveTiming, type TimingDefaults } from './core/timing.js';
export { canTransition, isFinal, TRANSITIONS } from './core/transitions.js';
export {
  type CoordinatorTuning,
  type ResolvedRouseServerOptions,
  type RouseServer,
  type RouseServerOptions,
  resolveRouseServerOptions,
  startRouseServer,
} from './server.js';
export type { Caller, Coordinator, DependencyStatus, StoredResult } from './services/coordinator.js';
export { createCoordinator } from './services/create-coordinator.js';
export { createSqliteStore } from './store/sqlite/sqlite-store.js';
export type * from './store/store.js';
export { systemClock } from './system-clock.js';
