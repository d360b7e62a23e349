/**
 * Every error code a caller can see, with its HTTP status (docs/API.md §3), as plain constants with
 * no TypeBox (so the renderer can check a code without bundling a schema). The server's AppError
 * takes only these codes; the renderer's messages are keyed by them, so a code added here is a
 * compile error until every side knows it.
 */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  INVALID_API_KEY: 401,
  INVALID_SESSION: 401,
  INVALID_CREDENTIALS: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  FILE_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IMAGE_UNREADABLE: 422,
  IMAGE_TOO_SMALL: 422,
  IMAGE_TOO_LARGE: 422,
  NO_TIRE_DETECTED: 422,
  TREAD_NOT_VISIBLE: 422,
  LICENSE_INVALID: 422,
  LICENSE_EXPIRED: 422,
  LICENSE_ALREADY_REDEEMED: 409,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMIT_EXCEEDED: 429,
  TOO_MANY_ATTEMPTS: 429,
  INTERNAL_ERROR: 500,
  SERVER_BUSY: 503,
  MODEL_UNAVAILABLE: 503,
  STORAGE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

/** Whether a code read off the wire is one of the contract's (a newer server may send one this build does not know). */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_STATUS, code);
}
