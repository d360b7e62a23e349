/** The error envelope and what each error code means (docs/API.md §3); the codes themselves are in error-codes.ts. */
import { Type, type Static } from '@sinclair/typebox';
import { ERROR_CODES, type ErrorCode } from './error-codes.js';

export const ErrorEnvelope = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.Object({
      code: Type.Unsafe<ErrorCode>(
        Type.String({ enum: ERROR_CODES, description: 'What went wrong, for a program to act on (docs/API.md §3 lists when each is answered)' }),
      ),
      message: Type.String({ description: 'What went wrong and what to do, for a person to read' }),
    }),
  },
  { $id: 'ErrorEnvelope' },
);
export type ErrorEnvelope = Static<typeof ErrorEnvelope>;

export interface SuccessEnvelope<T> {
  success: true;
  data: T;
}
/** Every answer of /api/v1 but the OpenAPI document, the images and the CSV export. */
export type Envelope<T> = SuccessEnvelope<T> | ErrorEnvelope;

/** One line per code, as docs/API.md §3 says when each is answered. */
export const ERROR_MEANINGS: Record<ErrorCode, string> = {
  VALIDATION_ERROR: 'the request is malformed (the message names the field or parameter)',
  INVALID_API_KEY: 'the API key is malformed, unknown or revoked, or sent in another header than X-API-Key',
  INVALID_SESSION: 'no credentials where an account is needed, or the session cookie is unknown or expired',
  INVALID_CREDENTIALS: 'wrong email or password',
  FORBIDDEN: "not yours (another account's or shop's), not with an API key, not from the LAN, or a foreign Host / Origin",
  NOT_FOUND: 'no such item',
  METHOD_NOT_ALLOWED: 'known route, wrong method',
  CONFLICT: 'conflicts with the current state (the message says how)',
  FILE_TOO_LARGE: 'image over 10 MiB, JSON body over 64 KiB',
  UNSUPPORTED_MEDIA_TYPE: 'not JPEG, PNG or WebP by content, or not the content type this route takes',
  IMAGE_UNREADABLE: 'the image cannot be decoded (truncated or corrupt)',
  IMAGE_TOO_SMALL: 'under 256 px on the short side',
  IMAGE_TOO_LARGE: 'over 40 megapixels, or too costly to decode',
  NO_TIRE_DETECTED: 'the photo shows no tire tread (not charged)',
  TREAD_NOT_VISIBLE: 'a tire is in the photo but its tread cannot be read: a side view, a whole car, too far, blurred or dark (not charged)',
  LICENSE_INVALID: 'malformed, forged or foreign license code',
  LICENSE_EXPIRED: 'pro code past its date',
  LICENSE_ALREADY_REDEEMED: 'that code was redeemed before',
  IDEMPOTENCY_KEY_REUSED: 'the same Idempotency-Key with a different image or field',
  RATE_LIMIT_EXCEEDED: 'the scan allowance is used up (Retry-After)',
  TOO_MANY_ATTEMPTS: 'too many attempts from this caller (Retry-After)',
  INTERNAL_ERROR: 'a bug (the message shows no internals)',
  SERVER_BUSY: 'busy or shutting down (Retry-After)',
  MODEL_UNAVAILABLE: 'the tread models could not be loaded',
  STORAGE_UNAVAILABLE: 'the database or disk is unavailable',
};
