/**
 * Registration that waits for a coordinator that is not up yet (an agent started with, or before, its
 * coordinator): retried with backoff for up to `startTimeoutMs`, each wait logged, then a clear error.
 * Answers that waiting cannot change (a bad token, a refused request) fail at once.
 */
import { hostname } from 'node:os';
import type { RegisterAgentRequest, RegisterAgentResponse } from '@rouse/protocol';
import type { Client } from '../client.js';
import type { Now } from '../clock.js';
import { isRetryable, RouseNetworkError } from '../errors.js';
import type { Logger } from '../logger.js';
import { backoffDelayMs, sleepMs } from '../retry.js';
import { describeFailure, formatSeconds } from './connection.js';

/** How long `start()` waits for the coordinator by default. */
export const DEFAULT_START_TIMEOUT_MS = 60_000;

/** Delays between registration attempts: about 1 s, doubling up to 5 s, with jitter. */
const START_BACKOFF = { baseDelayMs: 1000, maxDelayMs: 5000 };

export interface RegisterDeps {
  client: Client;
  request: RegisterAgentRequest;
  url: string;
  /** 0: one attempt only. */
  startTimeoutMs: number;
  /** The limit of one attempt (shortened to the time left). */
  requestTimeoutMs: number;
  logger: Logger;
  now: Now;
  /** Aborts the wait (`stop()` during `start()`). */
  signal: AbortSignal;
  random?: () => number;
}

export async function registerWithWait(deps: RegisterDeps): Promise<RegisterAgentResponse> {
  const { client, url, startTimeoutMs, logger, now, signal } = deps;
  const startedAt = now();
  for (let attempt = 1; ; attempt++) {
    const leftMs = startTimeoutMs - (now() - startedAt);
    const timeoutMs =
      startTimeoutMs === 0 ? deps.requestTimeoutMs : Math.min(deps.requestTimeoutMs, Math.max(1000, leftMs));
    try {
      // not retried by the transport: this loop decides (a duplicate registration is harmless — the
      // orphan holds nothing and goes `lost`, or, with a key, is replaced by the next incarnation)
      return await client.registerAgent(deps.request, { retry: false, signal, timeoutMs });
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (!isRetryable(error)) throw error;
      const delayMs = Math.min(
        backoffDelayMs(attempt, START_BACKOFF, deps.random),
        startTimeoutMs - (now() - startedAt),
      );
      if (delayMs <= 0) {
        const within =
          startTimeoutMs === 0 ? '' : ` within ${formatSeconds(startTimeoutMs)} (startTimeoutMs)`;
        throw new RouseNetworkError(
          `could not register with the coordinator at ${url}${within}: ${describeFailure(error)}. Is it running, and is the URL right?`,
          { code: 'start_timeout', cause: error },
        );
      }
      const log = attempt === 1 ? logger.warn : logger.info;
      log.call(
        logger,
        { url, attempt, retryInMs: Math.round(delayMs), err: error },
        `waiting for the coordinator at ${url} (${describeFailure(error)}), retrying in ${formatSeconds(delayMs)}`,
      );
      await sleepMs(delayMs, signal);
    }
  }
}

/** What a worker or monitor registers as (its resolved options). */
export interface AgentRegistration {
  agentType: string;
  name: string;
  labels: Record<string, string>;
  key?: string | undefined;
  supervisorId?: string | undefined;
  requires: string[];
  url: string;
  startTimeoutMs: number;
  requestTimeoutMs: number;
  logger: Logger;
}

/**
 * Register this process (host, pid) as the agent `o` describes — with its task types for a worker —
 * waiting for a coordinator that is not up yet ({@link registerWithWait}).
 */
export function registerProcess(
  client: Client,
  o: AgentRegistration,
  signal: AbortSignal,
  now: Now,
  taskTypes?: string[],
): Promise<RegisterAgentResponse> {
  return registerWithWait({
    client,
    request: {
      agentType: o.agentType,
      name: o.name,
      host: hostname(),
      pid: process.pid,
      ...(taskTypes === undefined ? {} : { taskTypes }),
      labels: o.labels,
      ...(o.key === undefined ? {} : { key: o.key }),
      ...(o.supervisorId === undefined ? {} : { supervisorId: o.supervisorId }),
      ...(o.requires.length === 0 ? {} : { requires: o.requires }),
    },
    url: o.url,
    startTimeoutMs: o.startTimeoutMs,
    requestTimeoutMs: o.requestTimeoutMs,
    logger: o.logger,
    now,
    signal,
  });
}
