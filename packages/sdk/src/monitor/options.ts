/**
 * Monitor options: `MonitorOptions` → {@link resolveMonitorOptions} → `ResolvedMonitorOptions`. Every
 * default lives here; bad values are rejected with an error naming the option and the rule.
 */
import { hostname } from 'node:os';
import type { JsonObject } from '@rouse/protocol';
import { InvalidOptionError } from '../errors.js';
import { type Logger, noopLogger } from '../logger.js';
import { type ResolvedRetryOptions, type RetryOptions, resolveRetryOptions } from '../retry.js';
import {
  type AgentIdentityOptions,
  type ResolvedAgentIdentity,
  resolveAgentIdentity,
} from '../runtime/agent-identity.js';
import { DEFAULT_START_TIMEOUT_MS } from '../runtime/register.js';
import { checkTimings } from '../runtime/timing-options.js';
import type { FetchFn } from '../transport.js';
import { checkMetadata } from './metadata.js';

export interface MonitorOptions extends AgentIdentityOptions {
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

export interface ResolvedMonitorOptions extends ResolvedAgentIdentity {
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

const NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export function resolveMonitorOptions(options: MonitorOptions): ResolvedMonitorOptions {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionError('options', 'must be an object');
  const o = options;
  if (typeof o.url !== 'string' || !/^https?:\/\/[^/]/.test(o.url)) {
    throw new InvalidOptionError('url', 'must be an http(s) URL such as http://127.0.0.1:7070', o.url);
  }
  if (typeof o.token !== 'string' || o.token === '') {
    throw new InvalidOptionError('token', 'must be the enrollment or admin token (a non-empty string)');
  }
  if (typeof o.agentType !== 'string' || !NAME.test(o.agentType)) {
    throw new InvalidOptionError(
      'agentType',
      'must be 1-128 characters of letters, digits, . _ : -',
      o.agentType,
    );
  }
  checkTimings(o);
  const requestTimeoutMs = o.requestTimeoutMs ?? MONITOR_DEFAULTS.requestTimeoutMs;
  if (!Number.isInteger(requestTimeoutMs) || requestTimeoutMs < 1) {
    throw new InvalidOptionError('requestTimeoutMs', 'must be an integer >= 1', requestTimeoutMs);
  }
  const field = o.iterationsField ?? MONITOR_DEFAULTS.iterationsField;
  if (field !== false && (typeof field !== 'string' || field.length < 1 || field.length > 128)) {
    throw new InvalidOptionError('iterationsField', 'must be false or a key of 1-128 characters', field);
  }
  const signals = o.shutdownSignals ?? MONITOR_DEFAULTS.shutdownSignals;
  if (
    signals !== false &&
    (!Array.isArray(signals) || signals.some((s) => typeof s !== 'string' || !s.startsWith('SIG')))
  ) {
    throw new InvalidOptionError(
      'shutdownSignals',
      "must be false or a list of signal names such as ['SIGTERM']",
      signals,
    );
  }
  if (o.fetch !== undefined && typeof o.fetch !== 'function')
    throw new InvalidOptionError('fetch', 'must be a function');
  const metadata = { ...(o.metadata ?? {}) };
  checkMetadata(metadata, 'metadata');
  return {
    url: o.url,
    token: o.token,
    agentType: o.agentType,
    name: o.name ?? `${hostname()}/${process.pid}`,
    labels: { ...(o.labels ?? {}) },
    heartbeatIntervalMs: o.heartbeatIntervalMs,
    heartbeatTimeoutMs: o.heartbeatTimeoutMs,
    startTimeoutMs: o.startTimeoutMs ?? MONITOR_DEFAULTS.startTimeoutMs,
    logger: o.logger ?? noopLogger,
    fetch: o.fetch,
    metrics: o.metrics ?? MONITOR_DEFAULTS.metrics,
    iterationsField: field === false ? undefined : field,
    metadata,
    shutdownSignals: signals === false ? [] : [...signals],
    retry: resolveRetryOptions(o.retry),
    requestTimeoutMs,
    ...resolveAgentIdentity(o),
  };
}
