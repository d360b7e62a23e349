/**
 * The route side of the contract: the response maps (success envelope, error envelopes, headers)
 * with which routes declare their answers for the serializer and the OpenAPI document. The wire
 * schemas themselves live in src/shared/contract/ (one source for server, sync and renderer) and
 * are re-exported here for the routes.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { ErrorEnvelope, ok } from '../../shared/contract/index.js';

export * from '../../shared/contract/index.js';

/**
 * Marks a response header's schema as sent on every answer of its status: plugins/swagger.ts turns
 * it into the Header Object's `required: true` (OpenAPI's "always sent"), which @fastify/swagger
 * does not write itself.
 */
export const ALWAYS_SENT = 'x-always-sent';

/**
 * The error envelope by reference ($ref to its $id, as the OpenAPI document lists it once), with the
 * headers a refusal carries; its type stays the envelope's (TypeBox 0.34 refs by id, untyped).
 */
export const envelopeRef = (options: { headers: Record<string, TSchema> }) => Type.Unsafe<ErrorEnvelope>(Type.Ref(ErrorEnvelope.$id!, options));

const RETRY_AFTER = Type.String({ description: 'Seconds to wait: on 429 until the window resets, on 503 and 409 a short back-off' });

/** Every route's failures: the envelope; a 429 (sign-in and registration limits) and a 503 carry Retry-After. */
const errors = {
  '4xx': envelopeRef({ headers: { 'Retry-After': RETRY_AFTER } }),
  '5xx': envelopeRef({ headers: { 'Retry-After': RETRY_AFTER } }),
};

const rateLimitHeader = (description: string, always: boolean) => Type.String({ description, ...(always ? { [ALWAYS_SENT]: true } : {}) });
/** On every 200 of analyze; on a refusal, once the caller is known (not a 401 or a Host/Origin 403). */
const rateLimitHeaders = (always: boolean) => ({
  'X-RateLimit-Limit': rateLimitHeader(
    "The window's allowance: 3 a UTC day anonymous, 10 a month free (plus the pack credit left), or unlimited (pro)",
    always,
  ),
  'X-RateLimit-Remaining': rateLimitHeader('Scans left in the window (plus pack credit), or unlimited; scans being analysed count as spent', always),
  'X-RateLimit-Reset': rateLimitHeader('Unix seconds at the end of the window', always),
});

/**
 * analyze's responses with the headers a POS reads (OpenAPI only: the serializer ignores them).
 * A refusal made before the caller is known (401, a 403 of the Host or Origin check) has no X-RateLimit-*.
 */
export function analyzeReplies<T extends TSchema>(data: T) {
  return {
    200: {
      ...ok(data),
      headers: {
        ...rateLimitHeaders(true),
        'Idempotent-Replayed': Type.String({ description: '"true" when this is the stored answer of an earlier request with the same Idempotency-Key' }),
      },
    },
    '4xx': envelopeRef({ headers: { ...rateLimitHeaders(false), 'Retry-After': RETRY_AFTER } }),
    '5xx': envelopeRef({ headers: { ...rateLimitHeaders(false), 'Retry-After': RETRY_AFTER } }),
  };
}

/** Response schemas of a route: its success status, and the error envelope for every failure. */
export function replies<T extends TSchema, S extends number = 200>(data: T, status?: S) {
  return { [status ?? 200]: ok(data), ...errors } as Record<S, ReturnType<typeof ok<T>>> & typeof errors;
}

/**
 * For a route whose success body is a JSON document of its own rather than the envelope (the
 * OpenAPI document): an open object, so the serializer passes every property through as sent.
 */
export function documentReplies(description: string) {
  return {
    200: {
      description,
      content: { 'application/json': { schema: Type.Unsafe<object>({ type: 'object', additionalProperties: true }) } },
    },
    ...errors,
  };
}

const RawBody = Type.Unsafe<Buffer | string>({ type: 'string', format: 'binary' });

/**
 * For routes whose success body is not JSON (images, CSV): sent as-is, described for OpenAPI
 * under its own content types, so the error envelopes stay application/json.
 */
export function rawReplies(description: string, contentTypes?: string[]) {
  if (!contentTypes) return { 200: Type.Unsafe<Buffer | string>({ type: 'string', description }), ...errors };
  return {
    200: { description, content: Object.fromEntries(contentTypes.map((type) => [type, { schema: RawBody }])) },
    ...errors,
  };
}

/** An image route's answers: the bytes under their image types (JPEG, PNG, WebP); a refusal is the JSON envelope. */
export const imageReplies = (description: string) => rawReplies(description, ['image/jpeg', 'image/png', 'image/webp']);
