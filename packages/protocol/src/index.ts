export * from './agent.js';
export * from './alerts.js';
export * from './dashboard.js';
export * from './errors.js';
export * from './events.js';
export * from './merge-patch.js';
export * from './snapshot.js';
export * from './task.js';
export * from './vocabulary.js';
export * from './watchdog.js';

/** Protocol version served under `/v1`. */
export const PROTOCOL_VERSION = 1;
/** Inline results above this size must be uploaded as blobs. */
export const MAX_INLINE_RESULT_BYTES = 64 * 1024;
/** Heartbeat bodies above this size are rejected with `413`. */
export const MAX_HEARTBEAT_BYTES = 4 * 1024;
export * from './call-stream.js';
export * from './created-tasks.js';
export * from './units.js';
