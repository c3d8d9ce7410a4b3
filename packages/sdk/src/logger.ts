/**
 * The logger the SDK writes to: any object with pino's shape (`logger.warn({ taskId }, 'msg')`).
 * Pass a pino logger, or nothing for silence. The SDK never prints anything by itself.
 */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const noop = (): void => {};

/** A logger that drops everything (the default). */
export const noopLogger: Logger = Object.freeze({ debug: noop, info: noop, warn: noop, error: noop });
