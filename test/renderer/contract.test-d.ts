/**
 * Type-level test, checked by `npm run typecheck` with the renderer's tsconfig (tsconfig.web.json):
 * the renderer's error codes and wire types are the contract's (src/shared/contract/), so a code or
 * field added there reaches the renderer, and a mismatch is a compile error.
 */
import { expectTypeOf } from 'vitest';
import type { ApiError, ClientErrorCode } from '../../src/renderer/src/api/client';
import type { FRIENDLY } from '../../src/renderer/src/api/errors';
import type { ErrorCode, ErrorEnvelope, WireScan } from '../../src/shared/contract/index';
import type * as api from '../../src/shared/api';

// The error code of an ApiError is the contract's, or one the client finds itself.
expectTypeOf<ApiError['code']>().toEqualTypeOf<ErrorCode | 'NETWORK_ERROR' | 'BAD_RESPONSE'>();
expectTypeOf<ClientErrorCode>().toEqualTypeOf<ErrorCode | 'NETWORK_ERROR' | 'BAD_RESPONSE'>();
// The words are keyed by every code: a code without words is a compile error in api/errors.ts.
expectTypeOf<keyof typeof FRIENDLY>().toEqualTypeOf<ClientErrorCode>();
// What the server sends in an envelope is what ApiError holds.
expectTypeOf<ErrorEnvelope['error']['code']>().toExtend<ApiError['code']>();
// A code the contract does not list cannot be made.
// @ts-expect-error: not a code of the contract
expectTypeOf<'NOT_A_CODE'>().toExtend<ClientErrorCode>();
// The renderer's names are the contract's types.
expectTypeOf<api.WireScan>().toEqualTypeOf<WireScan>();
