/**
 * Stable error codes of the HTTP protocol (docs/protocol.md "Errors"). Every non-2xx response has the
 * body `{"error": {"code", "message", "details"}}`. Codes never change meaning once published.
 */
export const ERROR_STATUS = {
  validation_failed: 400,
  bad_json: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  stale_version: 409,
  invalid_transition: 409,
  idempotency_conflict: 409,
  conflict: 409,
  agent_key_in_use: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

export interface ErrorBody {
  error: {
    code: ErrorCode;
    message: string;
    details?: Record<string, unknown>;
  };
}
