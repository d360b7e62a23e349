/**
 * License codes (docs/API.md §4): `TWL1.<base64url(payload JSON)>.<base64url(Ed25519 signature of the payload bytes)>`.
 * Verification is offline against one trusted public key. Every way a code can be wrong before the
 * expiry check (shape, encoding, signature, key, payload) gives the same LICENSE_INVALID message, so
 * the answer never tells a forger which part was rejected.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { AppError } from '../errors.js';

export type LicensePayload = { v: 1; id: string; kind: 'pack'; scans: number } | { v: 1; id: string; kind: 'pro'; expiresAt: string };

const PREFIX = 'TWL1';
/** Real codes are ~200 chars; anything far longer is not worth decoding. */
const MAX_CODE_LENGTH = 1024;
const CODE_SHAPE = /^TWL1\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/;
const ED25519_SIGNATURE_BYTES = 64;
/** The largest pack a code may carry. */
export const MAX_PACK_SCANS = 100_000;
/** A pro code's expiresAt: an ISO 8601 date-time with seconds optional and a zone (Z or ±hh:mm). */
export const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

export function invalidLicense(): AppError {
  return new AppError('LICENSE_INVALID', 'This license code is not valid. Check that it was copied completely.');
}

/** A code id: 1 to 64 visible ASCII characters (no spaces), what the vendor records per code. */
export function isValidCodeId(id: unknown): id is string {
  return typeof id === 'string' && id.length >= 1 && id.length <= 64 && /^[\x21-\x7e]+$/.test(id);
}

/** Strict base64url: the canonical encoding only, so one payload has exactly one textual form. */
function decodeBase64url(text: string): Buffer | null {
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : null;
}

/** The parsed payload, or null when it is not exactly one of the two shapes. */
export function parsePayload(bytes: Buffer): LicensePayload | null {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const p = value as Record<string, unknown>;
  const keys = Object.keys(p).sort().join(',');
  if (p.v !== 1 || !isValidCodeId(p.id)) return null;
  if (p.kind === 'pack' && keys === 'id,kind,scans,v') {
    const scans = p.scans;
    if (typeof scans !== 'number' || !Number.isInteger(scans) || scans < 1 || scans > MAX_PACK_SCANS) return null;
    return { v: 1, id: p.id, kind: 'pack', scans };
  }
  if (p.kind === 'pro' && keys === 'expiresAt,id,kind,v') {
    const expiresAt = p.expiresAt;
    if (typeof expiresAt !== 'string' || !ISO_DATE_TIME.test(expiresAt) || Number.isNaN(Date.parse(expiresAt))) {
      return null;
    }
    return { v: 1, id: p.id, kind: 'pro', expiresAt };
  }
  return null;
}

/** Load the trusted key; throws (at startup) when the PEM is not an Ed25519 public key. */
export function loadLicensePublicKey(pem: string): KeyObject {
  // createPublicKey would quietly derive the public half of a private key: the vendor's signing
  // key must never sit on a shop PC or a hub (docs/API.md §4), so a private PEM is refused by name
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem)) {
    throw new Error(
      'the license public key file holds a PRIVATE key (the signing key, which stays with the vendor): give the public key (license-public.pem) instead',
    );
  }
  const key = createPublicKey(pem);
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new Error(`the license public key must be Ed25519, got ${key.asymmetricKeyType ?? 'unknown'}`);
  }
  return key;
}

/** Verify signature and shape; AppError LICENSE_INVALID otherwise. Expiry is the caller's business. */
export function verifyLicenseCode(code: string, publicKey: KeyObject): LicensePayload {
  if (typeof code !== 'string') throw invalidLicense();
  const trimmed = code.trim();
  if (trimmed.length > MAX_CODE_LENGTH) throw invalidLicense();
  const match = CODE_SHAPE.exec(trimmed);
  if (!match) throw invalidLicense();
  const payloadBytes = decodeBase64url(match[1]!);
  const signature = decodeBase64url(match[2]!);
  if (!payloadBytes || !signature || signature.length !== ED25519_SIGNATURE_BYTES) throw invalidLicense();
  let genuine = false;
  try {
    genuine = verify(null, payloadBytes, publicKey, signature);
  } catch {
    genuine = false;
  }
  if (!genuine) throw invalidLicense();
  const payload = parsePayload(payloadBytes);
  if (!payload) throw invalidLicense();
  return payload;
}

/** Vendor side: sign a payload with the private key (PEM). */
export function issueLicenseCode(payload: LicensePayload, privateKeyPem: string): string {
  const key = createPrivateKey(privateKeyPem);
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('the license signing key must be Ed25519');
  const bytes = Buffer.from(JSON.stringify(payload), 'utf8');
  if (!parsePayload(bytes)) throw new Error('refusing to sign a payload the app would reject');
  const signature = sign(null, bytes, key);
  return `${PREFIX}.${bytes.toString('base64url')}.${signature.toString('base64url')}`;
}

export function generateLicenseKeyPair(): { publicKeyPem: string; privateKeyPem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return {
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/**
 * A pro license that would end at or before the pro the account already has adds nothing:
 * refused unused (redeeming would burn the code), so it can still go to another account. Thrown
 * inside the stores' redeem transaction, after the already-redeemed check.
 */
export function proAddsNothing(current: Date, licenseEnd: Date): AppError {
  return new AppError(
    'CONFLICT',
    `Your pro plan already runs until ${current.toISOString().slice(0, 10)}, past this license's end ` +
      `(${licenseEnd.toISOString().slice(0, 10)}): it would add nothing, so it was not used. Keep it for another account.`,
  );
}
