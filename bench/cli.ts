/** Shared by the bench and the long-run scripts: flags, and a pro license for their test account. */
import { issueLicenseCode } from '../src/core/licensing/codes.js';

/** `--name value` from the command line, or the fallback. */
export function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

/** A pro code, unique per run, that the server started with the matching public key accepts. */
export function proCode(privateKeyPem: string, label: string): string {
  return issueLicenseCode({ v: 1, id: `${label}-${Date.now()}`, kind: 'pro', expiresAt: '2099-01-01T00:00:00Z' }, privateKeyPem);
}
