/** Secrets and identifiers: all from the OS CSPRNG, all unguessable. */
import { createHash, randomBytes } from 'node:crypto';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** 128 random bits as 32 hex chars: scan ids (docs/API.md §5), account and key ids. */
export function randomId(): string {
  return randomBytes(16).toString('hex');
}

/**
 * `length` base62 characters without modulo bias: bytes >= 248 (4 × 62) are
 * rejected rather than folded, so every character is equally likely.
 */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** 32 random bytes, base64url: the session cookie value. */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
