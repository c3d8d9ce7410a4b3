/**
 * Monitor options: `MonitorOptions` → {@link resolveMonitorOptions} → `ResolvedMonitorOptions`. Every
 * default lives here (the ones every agent has: `runtime/agent-options.ts`); bad values are rejected
 * with an error naming the option and the rule.
 */
import type { JsonObject } from '@rouse/protocol';
import { InvalidOptionError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ResolvedRetryOptions, RetryOptions } from '../retry.js';
import type { AgentIdentityOptions, ResolvedAgentIdentity } from '../runtime/agent-identity.js';
import { resolveAgentOptions } from '../runtime/agent-options.js';
import { DEFAULT_START_TIMEOUT_MS } from '../runtime/register.js';
import {
  type ResolvedSnapshotOptions,
  resolveSnapshotOptions,
  type SnapshotOptions,
} from '../runtime/snapshots.js';
import type { FetchFn } from '../transport.js';
import { checkMetadata } from './metadata.js';

export interface MonitorOptions extends AgentIdentityOptions, SnapshotOptions {
  /** Base URL of the coordinator, e.g. `http://127.0.0.1:7070`. */
  url: string;
  /** Enrollment (or admin) token used once to register; the monitor then acts with its agent token. */
  token: string;
  /** Selects the agent's watchdog policy on the coordinator. */
  agentType: string;
  /** A name for humans. @default `${hostname}/${pid}` */
  name?: string;
  /** Labels of the agent. @default {} */
  labels?: Record<string, string>;
  /** Heartbeat interval. @default the coordinator's (its policy's `expected_interval`) */
  heartbeatIntervalMs?: number;
  /** Time limit of one heartbeat request. @default the heartbeat interval, within [1000, 5000] */
  heartbeatTimeoutMs?: number;
  /** How long `start()` waits for a coordinator that is not up yet; 0 fails at once. @default 60000 */
  startTimeoutMs?: number;
  /** A pino-compatible logger. @default silent */
  logger?: Logger;
  /** A `fetch` implementation. @default node:http with a keep-alive agent */
  fetch?: FetchFn;
  /**
   * Send claims, heartbeats and completions as frames over one upgraded connection (falls back to
   * HTTP by itself when the coordinator does not upgrade; not used with `fetch`). @default true
   */
  callStream?: boolean;
  /** Sample the process's RSS, CPU and event-loop lag for every heartbeat (the runaway detectors use them). @default true */
  metrics?: boolean;
  /**
   * The `metadata` key that counts finished `iteration()`s; `false` for none. Point the policy's
   * `stall_detection.progress_field` at it and a loop that stops turning is `stalled`. @default 'iterations'
   */
  iterationsField?: string | false;
  /** Metadata to start with (merged by later `metadata()` calls). @default {} */
  metadata?: JsonObject;
  /** Signals that stop the monitor (and abort `monitor.signal`); `false` installs none. @default ['SIGTERM', 'SIGINT'] */
  shutdownSignals?: NodeJS.Signals[] | false;
  /** Retry policy of transient network errors. */
  retry?: RetryOptions;
  /** Time limit of one request (registration, leave). @default 30000 */
  requestTimeoutMs?: number;
}

export interface ResolvedMonitorOptions extends ResolvedAgentIdentity, ResolvedSnapshotOptions {
  url: string;
  token: string;
  agentType: string;
  name: string;
  labels: Record<string, string>;
  heartbeatIntervalMs: number | undefined;
  heartbeatTimeoutMs: number | undefined;
  startTimeoutMs: number;
  logger: Logger;
  fetch: FetchFn | undefined;
  callStream: boolean;
  metrics: boolean;
  iterationsField: string | undefined;
  metadata: JsonObject;
  shutdownSignals: NodeJS.Signals[];
  retry: ResolvedRetryOptions;
  requestTimeoutMs: number;
}

export const MONITOR_DEFAULTS = Object.freeze({
  startTimeoutMs: DEFAULT_START_TIMEOUT_MS,
  metrics: true,
  iterationsField: 'iterations',
  shutdownSignals: ['SIGTERM', 'SIGINT'] as NodeJS.Signals[],
  requestTimeoutMs: 30_000,
});

export function resolveMonitorOptions(options: MonitorOptions): ResolvedMonitorOptions {
  const common = resolveAgentOptions(options);
  const o = options;
  const field = o.iterationsField ?? MONITOR_DEFAULTS.iterationsField;
  if (field !== false && (typeof field !== 'string' || field.length < 1 || field.length > 128)) {
    throw new InvalidOptionError('iterationsField', 'must be false or a key of 1-128 characters', field);
  }
  const metadata = checkMetadata({ ...(o.metadata ?? {}) }, 'metadata');
  return {
    ...common,
    ...resolveSnapshotOptions(o),
    metrics: o.metrics ?? MONITOR_DEFAULTS.metrics,
    iterationsField: field === false ? undefined : field,
    metadata,
  };
}
