/**
 * Events of the runtimes (Worker, Monitor) are emitted through a `safeEmit` that never throws into the
 * runtime: a listener that throws is logged. `error` events are informational — the runtime already
 * handled the problem — so with no listener they are only logged (an EventEmitter would throw).
 */
import type { EventEmitter } from 'node:events';
import type { Logger } from '../logger.js';
import { isConnectionFailure } from './connection.js';

/** The payload of every runtime's `error` event. */
export interface RuntimeErrorEvent {
  error: unknown;
  /** What was being done: `heartbeat`, `claim`, `complete`, `spool`, `onWake`, ... */
  op: string;
  taskId?: string;
}

export type SafeEmit<E extends Record<keyof E, unknown[]>> = <K extends keyof E>(
  event: K,
  ...args: E[K]
) => void;

/**
 * Make the `safeEmit` of `emitter`. `context()` gives the fields every log line carries (the agent id);
 * events named in `logged` are also logged at that level (with their `taskId` and `code`). Network
 * failures are logged at debug only: the connection watch logs an outage once.
 */
export function createSafeEmit<E extends Record<keyof E, unknown[]>>(
  emitter: EventEmitter,
  logger: Logger,
  what: string,
  context: () => Record<string, unknown>,
  logged: Partial<Record<keyof E, 'info' | 'warn'>> = {},
): SafeEmit<E> {
  return (event, ...args) => {
    const level = logged[event];
    if (level !== undefined) {
      const e = args[0] as { task?: { id: string }; taskId?: string; code?: string } | undefined;
      const fields = { taskId: e?.task?.id ?? e?.taskId, code: e?.code, ...context() };
      logger[level](fields, `${what} ${String(event)}`);
    }
    if (event === 'error') {
      const e = args[0] as RuntimeErrorEvent;
      const fields = { err: e.error, op: e.op, taskId: e.taskId, ...context() };
      if (isConnectionFailure(e.error)) logger.debug(fields, `${what} ${e.op} failed`);
      else logger.warn(fields, `${what} ${e.op} error`);
      if (emitter.listenerCount('error') === 0) return;
    }
    try {
      emitter.emit(event as string, ...args);
    } catch (err) {
      logger.error({ err, event, ...context() }, `a ${what} event listener threw`);
    }
  };
}
