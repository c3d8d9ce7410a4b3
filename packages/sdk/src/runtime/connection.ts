/**
 * The state of an agent's connection to its coordinator, as its requests see it. A network failure
 * (refused, reset, timed out, a proxy's 502/503/504) marks it down — logged once, as a warning — and the
 * next answered request marks it up again — logged once. Individual failed requests are not logged
 * above debug: during an outage they would drown the log.
 */
import type { Now } from '../clock.js';
import { RouseNetworkError } from '../errors.js';
import type { Logger } from '../logger.js';

export interface ConnectionWatchDeps {
  url: string;
  logger: Logger;
  now: Now;
  /** The connection was just declared lost. */
  onDown(error: unknown): void;
  /**
   * It is back after `downMs`. `silent`: some failure of the outage was a timeout — connections then
   * may have died without a word, and requests sent during it may hang on them.
   */
  onUp(downMs: number, silent: boolean): void;
}

/** True for failures that say "the coordinator could not be reached", not "it answered no". */
export function isConnectionFailure(error: unknown): boolean {
  return error instanceof RouseNetworkError;
}

/** A short account of a failure for a log line: `ECONNREFUSED`, `timeout: ... timed out after 1000 ms`. */
export function describeFailure(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown } | undefined;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  if (code === 'timeout' && typeof e?.message === 'string') return e.message;
  return code ?? (typeof e?.message === 'string' ? e.message : String(error));
}

export class ConnectionWatch {
  private readonly deps: ConnectionWatchDeps;
  private downSince: number | undefined;
  private silent = false;

  constructor(deps: ConnectionWatchDeps) {
    this.deps = deps;
  }

  /** True while the connection is considered lost. */
  get down(): boolean {
    return this.downSince !== undefined;
  }

  /** A request failed; returns true when it was a network failure (the connection is now down). */
  failed(error: unknown): boolean {
    if (!isConnectionFailure(error)) return false;
    if ((error as { code?: unknown }).code === 'timeout') this.silent = true;
    if (this.downSince === undefined) {
      this.downSince = this.deps.now();
      this.deps.logger.warn(
        { url: this.deps.url, err: error },
        `lost the connection to the coordinator at ${this.deps.url} (${describeFailure(error)}); retrying`,
      );
      this.deps.onDown(error);
    }
    return true;
  }

  /** A request was answered (whatever the answer): the connection works. */
  ok(): void {
    if (this.downSince === undefined) return;
    const downMs = this.deps.now() - this.downSince;
    const silent = this.silent;
    this.downSince = undefined;
    this.silent = false;
    this.deps.logger.info(
      { url: this.deps.url, downMs },
      `the connection to the coordinator at ${this.deps.url} is back after ${formatSeconds(downMs)}`,
    );
    this.deps.onUp(downMs, silent);
  }
}

/** `2 s`, `0.3 s`, `12.5 s`. */
export function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return `${s >= 10 || Number.isInteger(s) ? Math.round(s) : s.toFixed(1)} s`;
}
