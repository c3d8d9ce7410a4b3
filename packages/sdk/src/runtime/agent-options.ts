/**
 * The options every agent process has, whether a task `Worker` or a `Monitor`: where the coordinator
 * is and how to reach it, who the agent is, its heartbeat timing, signals and logging. Both option
 * resolvers start here, so the rules and their messages are the same.
 */
import { hostname } from 'node:os';
import { Client } from '../client.js';
import { InvalidOptionError } from '../errors.js';
import { type Logger, noopLogger } from '../logger.js';
import { type ResolvedRetryOptions, type RetryOptions, resolveRetryOptions } from '../retry.js';
import type { FetchFn } from '../transport.js';
import {
  type AgentIdentityOptions,
  type ResolvedAgentIdentity,
  resolveAgentIdentity,
} from './agent-identity.js';
import { DEFAULT_START_TIMEOUT_MS } from './register.js';
import { checkTimings } from './timing-options.js';

/** Agent types, task types: what the coordinator's `name` rule accepts. */
export const NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export interface AgentOptions extends AgentIdentityOptions {
  url: string;
  token: string;
  agentType: string;
  name?: string;
  labels?: Record<string, string>;
  heartbeatIntervalMs?: number;
  heartbeatTimeoutMs?: number;
  startTimeoutMs?: number;
  logger?: Logger;
  fetch?: FetchFn;
  /** Claims, heartbeats and completions over a call stream (see `ClientOptions.callStream`). @default true */
  callStream?: boolean;
  shutdownSignals?: NodeJS.Signals[] | false;
  retry?: RetryOptions;
  requestTimeoutMs?: number;
}

export interface ResolvedAgentOptions extends ResolvedAgentIdentity {
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
  shutdownSignals: NodeJS.Signals[];
  retry: ResolvedRetryOptions;
  requestTimeoutMs: number;
}

export const AGENT_OPTION_DEFAULTS = Object.freeze({
  shutdownSignals: ['SIGTERM', 'SIGINT'] as NodeJS.Signals[],
  requestTimeoutMs: 30_000,
  startTimeoutMs: DEFAULT_START_TIMEOUT_MS,
});

export function resolveAgentOptions(options: AgentOptions): ResolvedAgentOptions {
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
  const requestTimeoutMs = o.requestTimeoutMs ?? AGENT_OPTION_DEFAULTS.requestTimeoutMs;
  if (!Number.isInteger(requestTimeoutMs) || requestTimeoutMs < 1) {
    throw new InvalidOptionError('requestTimeoutMs', 'must be an integer >= 1', requestTimeoutMs);
  }
  const signals = o.shutdownSignals ?? AGENT_OPTION_DEFAULTS.shutdownSignals;
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
  if (o.callStream !== undefined && typeof o.callStream !== 'boolean')
    throw new InvalidOptionError('callStream', 'must be a boolean', o.callStream);
  return {
    url: o.url,
    token: o.token,
    agentType: o.agentType,
    name: o.name ?? `${hostname()}/${process.pid}`,
    labels: { ...(o.labels ?? {}) },
    heartbeatIntervalMs: o.heartbeatIntervalMs,
    heartbeatTimeoutMs: o.heartbeatTimeoutMs,
    startTimeoutMs: o.startTimeoutMs ?? AGENT_OPTION_DEFAULTS.startTimeoutMs,
    logger: o.logger ?? noopLogger,
    fetch: o.fetch,
    callStream: o.callStream ?? true,
    shutdownSignals: signals === false ? [] : [...signals],
    retry: resolveRetryOptions(o.retry),
    requestTimeoutMs,
    ...resolveAgentIdentity(o),
  };
}

/** The client an agent process talks to its coordinator through, from its resolved options. */
export function coordinatorClient(o: ResolvedAgentOptions): Client {
  return new Client({
    url: o.url,
    token: o.token,
    requestTimeoutMs: o.requestTimeoutMs,
    retry: o.retry,
    callStream: o.callStream,
    ...(o.fetch ? { fetch: o.fetch } : {}),
  });
}
