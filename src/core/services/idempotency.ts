/**
 * Idempotency-Key handling for POST /analyze (SPEC §2): per caller (account, or the
 * anonymous client IP) for 24 h. A retry gets the stored response, replayed with
 * `Idempotent-Replayed: true` and charged once; the same key with a different image is
 * refused; a retry while the first request still runs gets CONFLICT (retry in a second);
 * a failed first attempt is forgotten so its retry runs afresh.
 */
import type { Clock } from '../clock.js';
import { AppError } from '../errors.js';
import type { Store } from '../storage/store.js';
import type { Caller } from '../types.js';
import { meteringAddress } from './client-ip.js';
import type { AnalyzeResponse } from './ports.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** An in-flight claim older than this was left by a crash (no analysis runs this long): take it over. */
export const IN_FLIGHT_MAX_AGE_MS = 10 * 60 * 1000;
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

export function checkIdempotencyKey(key: string): string {
  if (!KEY_SHAPE.test(key)) {
    throw new AppError('VALIDATION_ERROR', 'Idempotency-Key must be 1 to 255 visible ASCII characters.');
  }
  return key;
}

export function callerKeyOf(caller: Caller): string {
  return caller.kind === 'account' ? `acct:${caller.account.id}` : `ip:${meteringAddress(caller.ip)}`;
}

export interface IdempotencyClaim {
  callerKey: string;
  key: string;
}

/**
 * Claim the key for this request. Returns the claim to complete or abandon, or a replay
 * of the stored response. `requestHash` is the sha256 of the uploaded image.
 */
export async function claimIdempotencyKey(
  deps: { store: Store; clock: Clock },
  caller: Caller,
  rawKey: string,
  requestHash: string,
): Promise<{ claim: IdempotencyClaim } | { replay: AnalyzeResponse }> {
  const key = checkIdempotencyKey(rawKey);
  const callerKey = callerKeyOf(caller);
  const now = deps.clock.now();
  const begin = () =>
    deps.store.idempotency.begin({ callerKey, key, requestHash, createdAt: now }, new Date(now.getTime() - IDEMPOTENCY_TTL_MS));
  let outcome = await begin();
  if (
    !outcome.claimed &&
    outcome.existing.response === null &&
    outcome.existing.createdAt.getTime() < now.getTime() - IN_FLIGHT_MAX_AGE_MS
  ) {
    await deps.store.idempotency.abandon(callerKey, key);
    outcome = await begin();
  }
  if (outcome.claimed) return { claim: { callerKey, key } };
  const existing = outcome.existing;
  if (existing.requestHash !== requestHash) {
    throw new AppError(
      'IDEMPOTENCY_KEY_REUSED',
      'This Idempotency-Key was already used with a different image; use a new key for a new request.',
    );
  }
  if (!existing.response) {
    throw new AppError('CONFLICT', 'A request with this Idempotency-Key is still being processed; retry shortly.', {
      headers: { 'Retry-After': '1' },
    });
  }
  return {
    replay: {
      status: existing.response.status,
      body: existing.response.body as AnalyzeResponse['body'],
      headers: { ...existing.response.headers, 'Idempotent-Replayed': 'true' },
    },
  };
}
