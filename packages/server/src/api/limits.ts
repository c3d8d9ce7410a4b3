/**
 * Request limits of the HTTP API. Bodies past a size limit are refused with `413 payload_too_large`
 * (details: `limitBytes`), JSON nested deeper than `jsonMaxDepth` with `400 validation_failed`
 * (details: `maxDepth`), both before they reach the coordinator.
 */
import { MAX_HEARTBEAT_BYTES } from '@rouse/protocol';
import { ValidationError } from '../core/errors.js';

export interface ApiLimits {
  /** Any JSON body without a more specific limit below. @default 1048576 (1 MiB) */
  jsonBodyBytes?: number;
  /** `POST /v1/tasks/batch`. @default 16777216 (16 MiB) */
  batchBodyBytes?: number;
  /** `POST /v1/tasks/{id}/heartbeat` (docs/design.md §3: heartbeats are small). @default 4096 (4 KiB) */
  taskHeartbeatBytes?: number;
  /**
   * `POST /v1/agents/{agentId}/heartbeat`, which carries one beat per held task (about 150 bytes each),
   * so it is allowed more than a single task heartbeat. @default 65536 (64 KiB)
   */
  agentHeartbeatBytes?: number;
  /** `POST /v1/tasks/{id}/logs`. @default 1048576 (1 MiB) */
  logsBodyBytes?: number;
  /** `PUT /v1/tasks/{id}/result`, streamed to the blob store. @default 268435456 (256 MiB) */
  resultUploadBytes?: number;
  /**
   * `PUT` and `PATCH /v1/agents/{id}/snapshot` (the coordinator's `snapshotMaxBytes` limits the state
   * itself). @default 8454144 (8 MiB + 64 KiB)
   */
  snapshotBodyBytes?: number;
  /**
   * How deeply objects and arrays may nest in any JSON body (`{}` is one level, `{"a": []}` two),
   * checked on the text before it is parsed: validating deeper values would recurse without bound.
   * @default 64
   */
  jsonMaxDepth?: number;
  /**
   * A request refused before its body was read, with more body to come than a JSON body may hold,
   * is answered with `Connection: close`; the connection then reads and drops what the client still
   * sends for at most this long before it is cut, so the client reads the whole answer instead of a
   * reset. @default 2000
   */
  closeLingerMs?: number;
  /** SSE keep-alive comment interval (`/v1/events`, log follow). @default 15000 */
  sseKeepAliveMs?: number;
  /**
   * How often an open SSE stream's token (or dashboard session) is checked again; a revoked one
   * ends its stream. @default 2000
   */
  sseRecheckMs?: number;
  /** An SSE client this far behind (bytes buffered) is disconnected rather than buffered forever. @default 8388608 (8 MiB) */
  sseMaxBufferedBytes?: number;
}

export type ResolvedApiLimits = Required<ApiLimits>;

/**
 * The longest path parameter as sent (a task or agent id, a dependency name, still percent-encoded);
 * longer ones are refused with `414 payload_too_large`. It holds any 128-character name even with
 * every character escaped to three bytes (`/` as `%2F`).
 */
export const MAX_PATH_PARAM_BYTES = 512;

export const DEFAULT_API_LIMITS: Readonly<ResolvedApiLimits> = {
  jsonBodyBytes: 1024 * 1024,
  batchBodyBytes: 16 * 1024 * 1024,
  taskHeartbeatBytes: MAX_HEARTBEAT_BYTES,
  agentHeartbeatBytes: 64 * 1024,
  logsBodyBytes: 1024 * 1024,
  resultUploadBytes: 256 * 1024 * 1024,
  snapshotBodyBytes: 8 * 1024 * 1024 + 64 * 1024,
  jsonMaxDepth: 64,
  closeLingerMs: 2000,
  sseKeepAliveMs: 15_000,
  sseRecheckMs: 2000,
  sseMaxBufferedBytes: 8 * 1024 * 1024,
};

/** Fill defaults; reject values that are not positive integers, naming the option. */
export function resolveApiLimits(limits: ApiLimits = {}): ResolvedApiLimits {
  const resolved = { ...DEFAULT_API_LIMITS };
  for (const key of Object.keys(DEFAULT_API_LIMITS) as (keyof ResolvedApiLimits)[]) {
    const value = limits[key];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new ValidationError(`limits.${key}`, `must be an integer >= 1 (got ${String(value)})`);
    }
    resolved[key] = value;
  }
  for (const key of Object.keys(limits)) {
    if (!(key in DEFAULT_API_LIMITS)) {
      throw new ValidationError(
        `limits.${key}`,
        `is not a known limit (known: ${Object.keys(DEFAULT_API_LIMITS).join(', ')})`,
      );
    }
  }
  return resolved;
}
