/** Plain words for each error code; the server's own message is always shown beside them. */
import { ApiError, type ClientErrorCode } from './client';

/** One for every code of the contract (src/shared/contract/error-codes.ts): a code added there is a compile error here until it has its words. */
export const FRIENDLY: Record<ClientErrorCode, string> = {
  VALIDATION_ERROR: 'Something in the form is not right.',
  INVALID_API_KEY: 'That API key is not valid or was revoked.',
  INVALID_SESSION: 'Your sign-in has expired. Please sign in again.',
  INVALID_CREDENTIALS: 'Wrong email or password.',
  FORBIDDEN: 'You are not allowed to do that here.',
  NOT_FOUND: 'We could not find that. It may have been deleted.',
  METHOD_NOT_ALLOWED: 'This version of the app does not support that action.',
  CONFLICT: 'That cannot be done as things stand.',
  FILE_TOO_LARGE: 'The photo is too big. Photos can be at most 10 MB.',
  UNSUPPORTED_MEDIA_TYPE: 'That file is not a photo we can read. Use JPEG, PNG or WebP.',
  IMAGE_UNREADABLE: 'The photo file is damaged or incomplete. Take or export it again.',
  IMAGE_TOO_SMALL: 'The photo is too small. Use at least 256 pixels on the short side.',
  IMAGE_TOO_LARGE: 'The photo has too many pixels (over 40 megapixels). Use a smaller one.',
  NO_TIRE_DETECTED: 'We could not see tire tread in this photo. Photograph the tread face, close and in focus.',
  TREAD_NOT_VISIBLE: 'A tire is in this photo, but its tread cannot be read. Photograph the tread face-on, close, in good light.',
  LICENSE_INVALID: 'That license code was not accepted.',
  LICENSE_EXPIRED: 'That license has already expired.',
  LICENSE_ALREADY_REDEEMED: 'That license code has already been used.',
  IDEMPOTENCY_KEY_REUSED: 'This request was already sent with different content.',
  RATE_LIMIT_EXCEEDED: 'You have used all the scans of your allowance.',
  TOO_MANY_ATTEMPTS: 'Too many sign-in attempts. Wait a moment and try again.',
  INTERNAL_ERROR: 'Something went wrong inside TireWear. Try again; nothing was charged.',
  SERVER_BUSY: 'TireWear is busy with other photos. Try again in a few seconds.',
  MODEL_UNAVAILABLE: 'The analysis model could not be loaded.',
  STORAGE_UNAVAILABLE: 'The database is not available right now. Try again shortly.',
  NETWORK_ERROR: 'No connection to the TireWear service.',
  BAD_RESPONSE: 'The service gave an unexpected answer.',
};

export interface FriendlyError {
  title: string;
  detail: string;
  /** The failure's code; UNKNOWN for an exception of the app itself, '' for a UserError (shown without one). */
  code: ClientErrorCode | 'UNKNOWN' | '';
}

/**
 * A problem the app finds itself (a short password, a gauge reading that is not a number, no
 * camera): already in plain words, so it is shown as it is, without a title or a code.
 */
export class UserError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UserError';
  }
}

/**
 * The server's messages are written for POS integrators too and may name HTTP headers ("send an
 * X-API-Key header"); staff at the counter get these words instead, for the codes that can carry them.
 */
const STAFF_DETAIL: Partial<Record<ClientErrorCode, string>> = {
  INVALID_SESSION: 'Sign in with the shop account to see this.',
  INVALID_API_KEY: 'The shop software is using an API key that no longer works. Create a new key under API keys.',
  FORBIDDEN:
    'From another computer of the shop network, only shop software with an API key can use TireWear. Use the TireWear window on the shop computer itself.',
};

/** Words only a developer would act on: a header name, a header, a bearer token, a cookie. */
const DEVELOPER_WORDING = /\bX-[A-Za-z]+(?:-[A-Za-z]+)*\b|\bheaders?\b|\bAuthorization\b|\bBearer\b|\bcookies?\b|\bauth-token\b/i;

function staffDetail(code: ClientErrorCode, message: string): string {
  return DEVELOPER_WORDING.test(message) ? (STAFF_DETAIL[code] ?? '') : message;
}

export function describeError(error: unknown): FriendlyError {
  if (error instanceof ApiError) {
    // every code has its words: the client turns a code this build does not know into BAD_RESPONSE
    return { title: FRIENDLY[error.code], detail: staffDetail(error.code, error.message), code: error.code };
  }
  if (error instanceof UserError) return { title: error.message, detail: '', code: '' };
  const detail = error instanceof Error ? error.message : String(error);
  return { title: 'Something went wrong.', detail, code: 'UNKNOWN' };
}

export function isSignedOutError(error: unknown): boolean {
  return error instanceof ApiError && (error.status === 401 || error.status === 403);
}
