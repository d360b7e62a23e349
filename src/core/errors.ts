/** Every failure a caller can see is an AppError, mapped once to the error envelope. */

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

export interface AppErrorOptions {
  /** Extra response headers, e.g. Retry-After. */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.headers = options.headers ?? {};
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}
