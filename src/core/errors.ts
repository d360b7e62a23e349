/** Every failure a caller can see is an AppError, mapped once to the error envelope. */

import { ERROR_STATUS, type ErrorCode } from '../shared/contract/error-codes.js';

/** The codes and their statuses are the contract's (src/shared/contract/error-codes.ts). */
export { ERROR_STATUS, type ErrorCode };

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
