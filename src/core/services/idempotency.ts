/**
 * Idempotency-Key handling for POST /analyze (docs/API.md §2): per caller (account, or the
 * anonymous client IP) for 24 h. A retry gets the stored response, replayed with
 * `Idempotent-Replayed: true` and charged once; the same key with a different request (the
 * image, or any form field: vehicle, position, verbose) is refused naming what differs; a
 * retry while the first request still runs gets CONFLICT (retry in a second); a failed first
 * attempt is forgotten so its retry runs afresh.
 */
import type { Clock } from '../clock.js';
import { AppError } from '../errors.js';
import type { Store } from '../storage/store.js';
import type { Caller, TirePosition } from '../types.js';
import { limitSubject } from './support/caller-limit.js';
import { sha256Hex } from './support/ids.js';
import type { AnalyzeResponse } from './ports.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** An in-flight claim older than this was left by a crash (no analysis runs this long): take it over. */
export const IN_FLIGHT_MAX_AGE_MS = 10 * 60 * 1000;
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;
const KEY_RULE = 'Idempotency-Key must be 1 to 255 visible ASCII characters (letters, digits, punctuation; no spaces), e.g. RO-4711-FL';

/** A key that passed the rule. Made only by parse(), so whoever holds one need not check it again. */
export class IdempotencyKey {
  private constructor(readonly value: string) {}

  /** The one parse of a key: the route's for the header (an in-process caller of the service parses its own). */
  static parse(raw: unknown): IdempotencyKey {
    if (typeof raw !== 'string' || !KEY_SHAPE.test(raw)) throw new AppError('VALIDATION_ERROR', KEY_RULE);
    return new IdempotencyKey(raw);
  }
}

export interface IdempotencyClaim {
  callerKey: string;
  key: string;
}

/** What a retry must repeat to be the same request: the image and every form field, as the scan stores them. */
export interface RequestFingerprint {
  /** sha256 (hex) of the uploaded bytes. */
  image: string;
  vehicle: string | null;
  position: TirePosition | null;
  verbose: boolean;
}

type FingerprintField = keyof RequestFingerprint;
const FIELDS: readonly FingerprintField[] = ['image', 'vehicle', 'position', 'verbose'];

/**
 * The stored form (IdempotencyRecord.requestHash): `v2;image=<sha256>;vehicle=<sha256 or ->;position=<FL… or ->;verbose=<0|1>`.
 * The vehicle is hashed (it may be a licence plate; the claim needs only to compare it).
 */
export function encodeFingerprint(request: RequestFingerprint): string {
  const vehicle = request.vehicle === null ? '-' : sha256Hex(request.vehicle);
  return `v2;image=${request.image};vehicle=${vehicle};position=${request.position ?? '-'};verbose=${request.verbose ? 1 : 0}`;
}

/** Field → stored value. A record written before form fields were covered holds the image hash alone. */
function decodeFingerprint(stored: string): Partial<Record<FingerprintField, string>> {
  if (!stored.startsWith('v2;')) return { image: stored };
  const fields: Partial<Record<FingerprintField, string>> = {};
  for (const part of stored.slice(3).split(';')) {
    const at = part.indexOf('=');
    const name = part.slice(0, at) as FingerprintField;
    if (FIELDS.includes(name)) fields[name] = part.slice(at + 1);
  }
  return fields;
}

/** The fields in which a retry differs from the stored request; fields the stored record lacks are not compared. */
export function fingerprintDifferences(stored: string, request: RequestFingerprint): FingerprintField[] {
  const before = decodeFingerprint(stored);
  const now = decodeFingerprint(encodeFingerprint(request));
  return FIELDS.filter((field) => before[field] !== undefined && before[field] !== now[field]);
}

function listed(names: readonly string[]): string {
  return names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

/**
 * Claim the key for this request. Returns the claim to complete or abandon, or the stored
 * response (its headers as stored: the caller brings the X-RateLimit-* figures up to date).
 */
export async function claimIdempotencyKey(
  deps: { store: Store; clock: Clock },
  caller: Caller,
  given: IdempotencyKey,
  request: RequestFingerprint,
): Promise<{ claim: IdempotencyClaim } | { replay: AnalyzeResponse }> {
  const key = given.value;
  // the same subject the per-caller limits count (an account, else the client address as metered)
  const callerKey = limitSubject(caller);
  const requestHash = encodeFingerprint(request);
  const now = deps.clock.now();
  const begin = () => deps.store.idempotency.begin({ callerKey, key, requestHash, createdAt: now }, new Date(now.getTime() - IDEMPOTENCY_TTL_MS));
  let outcome = await begin();
  if (!outcome.claimed && outcome.existing.response === null && outcome.existing.createdAt.getTime() < now.getTime() - IN_FLIGHT_MAX_AGE_MS) {
    await deps.store.idempotency.abandon(callerKey, key);
    outcome = await begin();
  }
  if (outcome.claimed) return { claim: { callerKey, key } };
  const existing = outcome.existing;
  const differences = fingerprintDifferences(existing.requestHash, request);
  if (differences.length > 0) {
    throw new AppError(
      'IDEMPOTENCY_KEY_REUSED',
      `This Idempotency-Key was already used with a different ${listed(differences)}; ` +
        'a retry must repeat the request exactly, so use a new key for a new request.',
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
      headers: { ...existing.response.headers },
    },
  };
}
